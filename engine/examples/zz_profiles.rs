use grantmatch_engine::catalogue::Catalogue;
use grantmatch_engine::profile::MatchInput;
use grantmatch_engine::records::CatalogueRecords;
fn main() {
    let cat = Catalogue::new(
        CatalogueRecords::read_dir(std::path::Path::new("fixtures/catalogue")).unwrap(),
    );
    for f in std::env::args().skip(1) {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for p in v.as_array().unwrap() {
            let input = MatchInput::from_value(p["request"].clone()).unwrap();
            let r = input.resolve(&cat).unwrap();
            println!("{}\t{}\t{:?}\tresearch={}\tfounding={}\tacademic={}\tsectors={:?}\twant={:?}\tacc={:?}\texcl={:?}\tnp={:?}\temp={:?}\tlang={:?}",
                f.replace("fixtures/eval/","").replace("/profiles.json",""), p["id"].as_str().unwrap(),
                r.applicant_types, r.research_oriented, r.founding, r.academic, r.sectors,
                r.wanted_grant_types, r.accepted_grant_types, r.excluded_grant_types, r.is_non_profit, r.employees, r.text_language);
        }
    }
}
