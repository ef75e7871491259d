//! The funding instruments a profile asks for or rules out, read from its texts: the
//! funding-type check of matching stands on them, so a refusal ("Kredite können wir nicht
//! tragen") must never read as a wish.

use crate::model::GrantType;

/// Funding types a profile rules out: "keine Kredite", "no loans", a refusal after the
/// instrument ("Kredite können wir nicht tragen", "Beteiligungen kommen nicht in Frage",
/// "loans are not an option"), debt it will not take on ("keine neuen Schulden", "we
/// cannot take on debt"); "nur Zuschüsse", "grants only" and "must be non-repayable" rule
/// out loans, guarantees and equity ("non-repayable grants" alone describes the grants). A loan that is merely not enough ("Ein Bankkredit allein reicht nicht
/// aus") is no refusal.
pub fn excluded_grant_types(text: &str) -> Vec<GrantType> {
    type Rules = Vec<(regex::Regex, &'static [GrantType])>;
    static R: std::sync::OnceLock<Rules> = std::sync::OnceLock::new();
    let rules = R.get_or_init(|| {
        let r = |p: &str| regex::Regex::new(&format!("(?i){p}")).expect("valid funding rule");
        let only = r"(?-u:\b)(nur|ausschließlich|lediglich) (nicht rückzahlbare )?zuschüsse|(?-u:\b)(grants|subsidies) only|only (non-repayable )?(grants|subsidies)|(must|has to|have to) be non-repayable";
        // A refusal that follows the instrument within its clause.
        let refused = r"[^.;!?]{0,30}?((?-u:\b)(nicht|kaum|keinesfalls) (tragen|aufnehmen|bedienen|leisten|stemmen|zurückzahlen|abgeben|verkaufen|in frage|infrage|in betracht)|kommen? (für uns )?(nicht|keinesfalls) (in frage|infrage|in betracht)|scheiden? (für uns )?aus(?-u:\b)|(ist|sind) (für uns )?keine option|(wollen|möchten|werden) wir nicht(?-u:\b)|lehnen wir ab|(are|is) (not an option|no option|out of the question|not possible|not acceptable|ruled out|not feasible|not for us)|(ist|sind) (für uns )?nicht akzeptabel|(we|which we) (cannot|can't|can not|could not|couldn't|won't|will not) (afford|service|repay|carry|take on|take out|give up|sell))";
        // Words before an instrument that refuse it ("keine neuen Kredite", "we cannot
        // take on a loan").
        let no = r"(?-u:\b)(keine?n?|no|without|ohne) (weiteren |neuen |zusätzlichen |further |new |more |additional |outside |external |externen )?";
        let cannot = r"(?-u:\b)(cannot|can't|can not|could not|couldn't|unable to|won't|will not|do not want to|don't want to|not willing to|unwilling to|avoid|avoiding) (to )?(take on |take out |taking on |taking out |afford |service |repay |carry |give up |giving up |sell |selling |dilute |give away )?(any |a |an |more |new |further |additional |our )?";
        let loan = r"(kredit(e|en)?|darlehen|loans?)(?-u:\b)";
        let guarantee = r"(bürgschaft(en)?|guarantees?)(?-u:\b)";
        let equity = r"(beteiligung(en)?|anteile|equity|shares|stakes?)(?-u:\b)";
        // Debt and investors: "keine Schulden" and "no investors" may state a fact
        // ("Wir haben keine Schulden und suchen einen Kredit"), so only a refusal counts.
        let debt = r"(schulden|verschuldung|debts?|borrowing)(?-u:\b)";
        let investors = r"(investoren|kapitalgeber|investors?)(?-u:\b)";
        let rule = |words: &str, extra: &str| {
            r(&format!(
                r"{only}|{no}{words}|{cannot}{words}|{words}{refused}{extra}"
            ))
        };
        let loan_extra = format!(
            r"|{cannot}{debt}|{debt}{refused}|(?-u:\b)(keine|no) (neuen|weiteren|zusätzlichen|new|more|further|additional) (schulden|debts?)|(?-u:\b)(ohne|without) (neue |weitere |new |more |further |additional )?(schulden|verschuldung|debts?)|(?-u:\b)keine rückzahlbaren|(?-u:\b)(nicht|kaum) (weiter )?verschulden"
        );
        let equity_extra = format!(
            r"|{cannot}{investors}|{investors}{refused}|(wollen|möchten|want) (keine|no) (externen |outside |external )?{investors}|(?-u:\b)no (outside|external) {investors}|without (giving up|selling|diluting) (shares|equity)"
        );
        vec![
            (rule(loan, &loan_extra), &[GrantType::Loan][..]),
            (rule(guarantee, ""), &[GrantType::Guarantee][..]),
            (rule(equity, &equity_extra), &[GrantType::Equity][..]),
        ]
    });
    let mut out = Vec::new();
    for sentence in crate::facts::applicants::sentences(text) {
        for (rx, types) in rules {
            let refused = rx
                .find_iter(sentence)
                .any(|m| !softened(clause_at(sentence, m.start())) && !softened(m.as_str()));
            if refused {
                for t in *types {
                    if !out.contains(t) {
                        out.push(*t);
                    }
                }
            }
        }
    }
    out
}

/// A wish, not a refusal: "Kredite möchten wir nach Möglichkeit nicht aufnehmen", "we
/// would rather not take on debt".
fn softened(text: &str) -> bool {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"(?i)nach möglichkeit|möglichst|wenn (es )?(möglich|geht)|(?-u:\b)(lieber|eher|ungern)(?-u:\b)|if possible|where possible|preferabl|ideally|(?-u:\b)rather(?-u:\b)|(?-u:\b)prefer")
            .expect("valid softener rule")
    })
    .is_match(text)
}

/// The funding types a profile asks for, none of them yet checked against the ruled-out
/// ones.
#[derive(Debug, Default, PartialEq)]
pub struct AskedTypes {
    /// Named in a sentence that seeks funding ("Wir suchen Zuschüsse, zinsgünstige
    /// Kredite und eine Beratung", "We are looking for grants and loans").
    pub sought: Vec<GrantType>,
    /// Only accepted, in a sentence that seeks none ("a loan is possible for the
    /// building", "we will also consider loans", "ein Kredit ist denkbar").
    pub accepted: Vec<GrantType>,
}

/// The funding types a profile seeks or accepts, with the funding-type words of
/// qualification's prompt reading. A sentence's request reaches its other clauses ("Wir
/// brauchen Zuschüsse, aber auch Kredite") unless they are negated ("Wir brauchen
/// Zuschüsse; Kredite können wir nicht tragen").
pub fn asked_grant_types(text: &str) -> AskedTypes {
    const SEEKING: &[&str] = &[
        "suche",
        "suchen",
        "sucht",
        "benotigen",
        "benotige",
        "brauchen",
        "brauche",
        "wunschen",
        "interessiert",
        "interessieren",
        "beantragen",
        "looking",
        "seeking",
        "seek",
        "need",
        "needs",
        "interested",
        "want",
        "apply",
    ];
    /// Words by which a profile accepts an instrument without seeking it ("a loan is
    /// possible", "ein Kredit kommt auch infrage", "we will also consider loans").
    const ACCEPTING: &[&str] = &[
        "moglich",
        "infrage",
        "frage",
        "denkbar",
        "akzeptabel",
        "possible",
        "acceptable",
        "consider",
        "open",
    ];
    let mut out = AskedTypes::default();
    for sentence in crate::facts::applicants::sentences(text) {
        let clauses: Vec<Vec<String>> = clauses(sentence)
            .map(|c| {
                crate::text::fold_name(c)
                    .split(' ')
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        let seeks = |words: &[String]| words.iter().any(|w| SEEKING.contains(&w.as_str()));
        let accepts = |words: &[String]| {
            words.iter().any(|w| ACCEPTING.contains(&w.as_str())) && !negated(words)
        };
        let list = if clauses.iter().any(|c| seeks(c)) {
            &mut out.sought
        } else if clauses.iter().any(|c| accepts(c)) {
            &mut out.accepted
        } else {
            continue;
        };
        for words in clauses.iter().filter(|c| seeks(c) || !negated(c)) {
            for t in words
                .iter()
                .filter_map(|w| crate::qualify::grant_type_of_word(w))
            {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }
    }
    let sought = out.sought.clone();
    out.accepted.retain(|t| !sought.contains(t));
    out
}

/// The clauses of a sentence, as byte ranges: split at semicolons, dashes and a contrast
/// ("…, aber …", "… but …").
fn clause_ranges(sentence: &str) -> Vec<std::ops::Range<usize>> {
    const CONTRASTS: [&str; 9] = [
        ";",
        " – ",
        " - ",
        " aber ",
        " but ",
        " doch ",
        " jedoch ",
        " however ",
        " whereas ",
    ];
    let mut cuts: Vec<usize> = CONTRASTS
        .iter()
        .flat_map(|c| sentence.match_indices(c).map(|(i, _)| i))
        .filter(|&i| i > 0)
        .chain([0, sentence.len()])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The clauses of a sentence ([`clause_ranges`]).
fn clauses(sentence: &str) -> impl Iterator<Item = &str> {
    clause_ranges(sentence).into_iter().map(|r| &sentence[r])
}

/// The clause of `sentence` that holds byte `at`.
fn clause_at(sentence: &str, at: usize) -> &str {
    clause_ranges(sentence)
        .into_iter()
        .find(|r| r.contains(&at))
        .map_or(sentence, |r| &sentence[r])
}

/// The folded clause holds a negation other than "nicht rückzahlbar" (non-repayable) or
/// "nicht nur" / "not only".
fn negated(words: &[String]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map_or("", String::as_str);
        match w.as_str() {
            "nicht" | "not" => {
                !(next.starts_with("ruckzahlbar") || next == "nur" || next == "only")
            }
            "kein" | "keine" | "keinen" | "keiner" | "no" | "never" | "cannot" | "ohne"
            | "without" | "t" => true,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use GrantType::*;

    fn wanted_grant_types(text: &str) -> Vec<GrantType> {
        let asked = asked_grant_types(text);
        assert!(asked.accepted.is_empty(), "{text}");
        asked.sought
    }

    #[test]
    fn wanted_funding_types_come_from_sentences_that_seek_funding() {
        assert_eq!(
            wanted_grant_types("Wir suchen Zuschüsse, zinsgünstige Kredite und eine Beratung."),
            [Subsidy, Loan]
        );
        assert_eq!(
            wanted_grant_types("We are looking for export guarantees. Our loans are repaid."),
            [Guarantee]
        );
        // A funding word outside a request states no preference.
        assert!(wanted_grant_types("Wir haben 2021 einen Kredit aufgenommen.").is_empty());
        assert_eq!(
            wanted_grant_types("Ich suche einen Gründungszuschuss."),
            [Subsidy]
        );
        assert_eq!(
            wanted_grant_types("Wir brauchen Zuschüsse, aber auch Kredite."),
            [Subsidy, Loan]
        );
        assert_eq!(
            wanted_grant_types("We need non-repayable grants, not only loans."),
            [Subsidy, Loan]
        );
    }

    #[test]
    fn an_instrument_may_be_accepted_without_being_sought() {
        let asked = |t| asked_grant_types(t);
        assert_eq!(
            asked("We would prefer grants, but a loan is possible for the building."),
            AskedTypes {
                sought: vec![],
                accepted: vec![Subsidy, Loan]
            }
        );
        assert_eq!(
            asked("Wir suchen Zuschüsse. Ein kleiner Kredit ist aber möglich."),
            AskedTypes {
                sought: vec![Subsidy],
                accepted: vec![Loan]
            }
        );
        // Sought in one sentence, accepted in another: sought.
        assert_eq!(
            asked("We need grants. Grants and loans are acceptable.").accepted,
            [Loan]
        );
        for text in [
            "Ein Kredit ist nicht möglich.",
            "Loans are not acceptable.",
            "Wir haben 2019 einen Kredit aufgenommen.",
        ] {
            assert_eq!(asked(text), AskedTypes::default(), "{text}");
        }
    }

    #[test]
    fn a_refused_instrument_is_not_wanted() {
        for text in [
            "Wir sind gemeinnützig und brauchen Zuschüsse; Kredite können wir nicht tragen.",
            "Wir suchen Zuschüsse – Darlehen kommen für uns nicht in Frage.",
            "We need grants, but we cannot take on loans.",
            "We are looking for grants; loans are not an option for us.",
        ] {
            assert_eq!(wanted_grant_types(text), [Subsidy], "{text}");
            assert_eq!(excluded_grant_types(text), [Loan], "{text}");
        }
    }

    #[test]
    fn refusals_of_each_instrument() {
        let cases: &[(&str, &[GrantType])] = &[
            ("Wir brauchen Zuschüsse, keine Kredite.", &[Loan]),
            ("Kredite können wir nicht tragen.", &[Loan]),
            ("Wir wollen keine neuen Schulden aufnehmen.", &[Loan]),
            ("Wir dürfen uns nicht weiter verschulden.", &[Loan]),
            ("Darlehen scheiden aus.", &[Loan]),
            ("We cannot afford more debt.", &[Loan]),
            ("We want to grow without debt.", &[Loan]),
            ("Loans are out of the question.", &[Loan]),
            ("Eine Bürgschaft ist für uns keine Option.", &[Guarantee]),
            ("Anteile wollen wir nicht abgeben.", &[Equity]),
            ("Wir wollen keine Investoren an Bord holen.", &[Equity]),
            ("We do not want to give up equity.", &[Equity]),
            ("No outside investors, please.", &[Equity]),
            ("Wir suchen nur Zuschüsse.", &[Loan, Guarantee, Equity]),
            (
                "The funding must be non-repayable.",
                &[Loan, Guarantee, Equity],
            ),
            ("Kredite wollen wir aber nicht aufnehmen.", &[Loan]),
            (
                "Wir haben ein Darlehen; neue Kredite möchten wir nicht aufnehmen.",
                &[Loan],
            ),
        ];
        for (text, types) in cases {
            assert_eq!(excluded_grant_types(text), *types, "{text}");
        }
    }

    #[test]
    fn a_wish_is_no_refusal() {
        for text in [
            "Kredite möchten wir nach Möglichkeit nicht aufnehmen.",
            "Wir suchen Zuschüsse; Kredite wollen wir möglichst nicht aufnehmen.",
            "We would rather not take on loans.",
            "Ideally no loans.",
        ] {
            assert!(excluded_grant_types(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_loan_that_is_not_enough_is_no_refusal() {
        for text in [
            "Ein Bankkredit allein reicht nicht aus.",
            "Wir haben einen Kredit aufgenommen, die Halle ist noch nicht fertig.",
            "We repaid our last loan and now plan a second site.",
            "Die Kreditinstitute der Region unterstützen uns nicht.",
            "We look for grants and loans.",
            "We look for non-repayable grants and low-interest loans.",
            "Wir haben keine Schulden und suchen einen Förderkredit.",
            "We have no investors yet and look for equity.",
        ] {
            assert!(excluded_grant_types(text).is_empty(), "{text}");
        }
    }
}
