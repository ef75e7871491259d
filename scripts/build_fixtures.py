#!/usr/bin/env python3
"""Build the shipped grantmatch catalogue (fixtures/catalogue/*.jsonl).

Deterministic, Python 3.11, standard library only. Reads only fixtures/source/
(verbatim copies of the shared source data, see fixtures/SOURCES.md) and writes
the six JSON Lines files of docs/catalogue-format.md. Run from the repo root:

    python3 scripts/build_fixtures.py

Every derivation rule used here is documented in fixtures/SOURCES.md.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import unicodedata
import uuid
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "fixtures", "source")
OUT = os.path.join(ROOT, "fixtures", "catalogue")
TS = "2026-03-12T00:00:00Z"  # scrape date of the Förderdatenbank data
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

ATTRIBUTION = (
    "{title} von Bundesministerium für Wirtschaft und Energie, lizenziert unter CC BY-ND 4.0 "
    "(https://creativecommons.org/licenses/by-nd/4.0/deed.de), Quelle: {url}"
)


# --------------------------------------------------------------------------- helpers

def uid(kind: str, code: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"urn:grantmatch:{kind}:{code}"))


FOLD = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "ae", "Ö": "oe", "Ü": "ue", "ß": "ss", "&": " "}


def slugify(text: str) -> str:
    """German-aware slug: umlauts folded (ä→ae, ß→ss), other accents stripped,
    lower-cased, every run of non [a-z0-9] characters becomes one '-', trimmed."""
    s = "".join(FOLD.get(ch, ch) for ch in text)
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def read_csv(*parts):
    with open(os.path.join(SRC, *parts), encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def read_json(*parts):
    with open(os.path.join(SRC, *parts), encoding="utf-8") as f:
        return json.load(f)


def parse_taxonomy_yaml(path: str) -> dict:
    """Tiny parser for exlab_ngo_taxonomy.yaml only: top-level keys, each a list of
    plain scalars or of flat mappings whose values are plain scalars or flow lists ([a, b, c])."""
    data: dict = {}
    key = None
    item = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if not line.startswith(" "):
                key = stripped.rstrip(":")
                data[key] = []
                continue
            m = re.match(r"^\s*(- )?(\w+):\s*(.*)$", line)
            if not m and stripped.startswith("- "):  # plain scalar list item
                data[key].append(stripped[2:].strip())
                continue
            if not m:
                raise ValueError(f"unparsable taxonomy line: {line!r}")
            if m.group(1):
                item = {}
                data[key].append(item)
            name, value = m.group(2), m.group(3).strip()
            if value.startswith("[") and value.endswith("]"):
                item[name] = [v.strip() for v in value[1:-1].split(",") if v.strip()]
            else:
                item[name] = value
    return data


def write_jsonl(name: str, rows: list[dict]) -> None:
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def unique_slug(slug: str, used: set) -> str:
    out, n = slug, 1
    while out in used:
        n += 1
        out = f"{slug}-{n}"
    used.add(out)
    return out


# --------------------------------------------------------------------------- regions

def build_regions() -> tuple[list[dict], dict]:
    rows, by_code, used = [], {}, set()
    for c in read_csv("vocab", "continents.csv"):
        s = slugify(c["name_en"])
        used.add(s)
        # continent codes AF, AS, NA, SA collide with ISO alpha-2 country codes (Afghanistan,
        # American Samoa, Namibia, Saudi Arabia), so all continent codes are prefixed "continent:"
        code = f"continent:{c['code']}"
        rows.append(dict(id=uid("region", code), code=code, slug=s,
                         name_de=c["name_de"], name_en=c["name_en"], region_type="continent"))
    for c in read_csv("vocab", "countries.csv"):
        s = slugify(c["name_en"])
        if s in used:  # e.g. country AQ "Antarctica" vs continent AN "Antarctica"
            s = f"{s}-{c['alpha2'].lower()}"
        used.add(s)
        rows.append(dict(id=uid("region", c["alpha2"]), code=c["alpha2"], slug=s,
                         name_de=c["name_de"], name_en=c["name_en"], region_type="country",
                         parent_id=uid("region", f"continent:{c['continent_code']}")))
    states = read_csv("vocab", "bundeslaender.csv")
    for st in states:
        s = slugify(st["name_de"])
        if s in used:
            s = f"{s}-{st['iso_3166_2'].lower()}"
        used.add(s)
        rows.append(dict(id=uid("region", st["iso_3166_2"]), code=st["iso_3166_2"], slug=s,
                         name_de=st["name_de"], name_en=st["name_en"], region_type="state",
                         parent_id=uid("region", "DE")))
    for r in rows:
        by_code[r["code"]] = r["id"]
    # state_codes of programmes.csv: BUND or the ISO 3166-2 suffix (BY, SN, ...)
    state_map = {"BUND": by_code["DE"]}
    for st in states:
        state_map[st["iso_3166_2"].split("-")[1]] = by_code[st["iso_3166_2"]]
    return rows, state_map


# --------------------------------------------------------------------------- grant areas

AREA_EN = {
    "arbeit": "Employment",
    "aus_weiterbildung": "Education & Further Training",
    "aussenwirtschaft": "Foreign Trade",
    "beratung": "Consulting",
    "corona": "COVID-19 Relief",
    "digitalisierung": "Digitalisation",
    "energieeffizienz_erneuerbare_energien": "Energy Efficiency & Renewable Energy",
    "existenzgruendung_festigung": "Business Start-up & Consolidation",
    "forschung_innovation_themenoffen": "Research & Innovation (open topic)",
    "forschung_innovation_themenspezifisch": "Research & Innovation (specific topics)",
    "frauenfoerderung": "Support for Women",
    "gesundheit_soziales": "Health & Social Affairs",
    "infrastruktur": "Infrastructure",
    "kultur_medien_sport": "Culture, Media & Sport",
    "landwirtschaft_laendliche_entwicklung": "Agriculture & Rural Development",
    "messen_ausstellungen": "Trade Fairs & Exhibitions",
    "mobilitaet": "Mobility",
    "regionalfoerderung": "Regional Development",
    "smart_cities_regionen": "Smart Cities & Regions",
    "staedtebau_stadterneuerung": "Urban Development & Renewal",
    "umwelt_naturschutz": "Environmental & Nature Conservation",
    "unternehmensfinanzierung": "Business Financing",
    "wohnungsbau_modernisierung": "Housing Construction & Modernisation",
}

SUBAREA_EN = {
    "arbeitsgestaltung_arbeitsschutz": "Work Organisation & Occupational Safety",
    "ausserbetriebliche_arbeitsgelegenheiten": "Work Opportunities outside Companies",
    "betriebliche_arbeitsplaetze": "Jobs in Companies",
    "eingliederung_besonderer_zielgruppen": "Labour Market Integration of Specific Groups",
    "qualifizierung_von_arbeitssuchenden": "Qualification of Jobseekers",
    "ausbildung_besonderer_zielgruppen": "Vocational Training for Specific Groups",
    "ausbildungsstrukturen_traeger": "Training Structures & Providers",
    "ausserbetriebliche_ausbildung": "Vocational Training outside Companies",
    "berufsvorbereitung": "Career Preparation",
    "betriebliche_ausbildung": "In-company Vocational Training",
    "studienfoerderung": "Study Grants",
    "weiterbildung_unternehmer_selbststaendige": "Further Training for Entrepreneurs & the Self-employed",
    "weiterbildung_von_arbeitnehmern": "Further Training for Employees",
    "weiterbildung_von_arbeitssuchenden": "Further Training for Jobseekers",
    "weiterbildungsstrukturen_traeger": "Further Training Structures & Providers",
    "auslandsinvestitionen": "Foreign Investment",
    "aussenwirtschaftsberatung": "Foreign Trade Consulting",
    "entwicklungszusammenarbeit": "Development Cooperation",
    "exportfinanzierung": "Export Financing",
    "markterkundung_erschliessung": "Market Exploration & Development",
    "messen_ausstellungen": "Trade Fairs & Exhibitions",
    "aus_weiterbildung": "Education & Further Training",
    "aussenwirtschaft": "Foreign Trade",
    "energieeffizienz_erneuerbare_energien": "Energy Efficiency & Renewable Energy",
    "existenzgruendung_festigung": "Business Start-up & Consolidation",
    "forschung_innovation": "Research & Innovation",
    "umwelt_naturschutz": "Environmental & Nature Conservation",
    "unternehmensfuehrung": "Business Management",
    "beratung_schulung": "Consulting & Training",
    "betriebliche_private_investitionen": "Business & Private Investment",
    "oeffentliche_infrastruktur": "Public Infrastructure",
    "wohnungsbau_modernisierung": "Housing Construction & Modernisation",
    "betriebsmittel": "Working Capital",
    "festigungsinvestitionen": "Consolidation Investment",
    "gruendungsinvestitionen": "Start-up Investment",
    "gruendungsstrukturen_netzwerke": "Start-up Structures & Networks",
    "lebensunterhalt_soziale_sicherung": "Living Costs & Social Security",
    "betriebliche_innovationen": "Business Innovation",
    "forschung_entwicklung": "Research & Development",
    "gruendung_von_technologieunternehmen": "Founding Technology Companies",
    "kooperationen_netzwerke": "Cooperation & Networks",
    "patentierung_verwertung": "Patenting & Exploitation",
    "bauen_wohnen": "Construction & Housing",
    "biowissenschaften": "Life Sciences",
    "geowissenschaften": "Geosciences",
    "gesundheit_medizin": "Health & Medicine",
    "grundlagenforschung": "Basic Research",
    "information_kommunikation": "Information & Communication",
    "land_forst_fischwirtschaft": "Agriculture, Forestry & Fisheries",
    "luft_raumfahrt": "Aeronautics & Space",
    "mikrosysteme": "Microsystems",
    "mobilitaet_verkehr": "Mobility & Transport",
    "nachwachsende_rohstoffe": "Renewable Raw Materials",
    "nanotechnologie": "Nanotechnology",
    "optische_technologien": "Optical Technologies",
    "produktion_dienstleistungen": "Production & Services",
    "schifffahrt_meerestechnik": "Shipping & Marine Technology",
    "sicherheitsforschung": "Security Research",
    "werkstoffe": "Materials",
    "wirtschafts_sozial_geisteswissenschaften": "Economics, Social Sciences & Humanities",
    "arbeit_aus_weiterbildung": "Employment, Education & Training",
    "existenzgruendung_unternehmensfinanzierung": "Business Start-up & Business Financing",
    "gesundheit_soziales_ff": "Health & Social Affairs",
    "sonstige": "Other",
    "behinderte_menschen": "People with Disabilities",
    "buergerschaftliches_engagement": "Civic Engagement",
    "gesundheit": "Health",
    "gleichstellung": "Gender Equality",
    "integration": "Integration",
    "kinder_jugendliche_familien": "Children, Young People & Families",
    "senioren_pflege": "Older People & Care",
    "energie_umwelt": "Energy & Environment",
    "gesundheit_soziales": "Health & Social Affairs",
    "kultur": "Culture",
    "laendliche_entwicklung": "Rural Development",
    "staedtebau_stadterneuerung": "Urban Development & Renewal",
    "tourismus": "Tourism",
    "verkehr": "Transport",
    "denkmalschutz_pflege": "Monument Protection & Preservation",
    "film_fernsehen": "Film & Television",
    "kunst_kultur": "Arts & Culture",
    "politische_bildung": "Civic Education",
    "sport_sportstaetten": "Sport & Sports Facilities",
    "besondere_formen_der_landbewirtschaftung": "Special Forms of Farming",
    "einzelbetriebliche_foerderung": "Support for Individual Farms",
    "fischwirtschaft": "Fisheries",
    "forstwirtschaft": "Forestry",
    "marktstrukturverbesserung": "Improvement of Market Structures",
    "wasserwirtschaft_kuestenschutz": "Water Management & Coastal Protection",
    "auslandsmessen": "Trade Fairs Abroad",
    "inlandsmessen": "Domestic Trade Fairs",
    "gewerbliche_wirtschaft": "Commercial Economy",
    "aktive_stadt_und_ortsteilzentren": "Active Town & District Centres",
    "energetische_sanierung": "Energy-efficient Refurbishment",
    "sanierung_entwicklung": "Redevelopment & Development",
    "soziale_stadt": "Socially Integrative City",
    "stadtumbau": "Urban Restructuring",
    "staedtebaulicher_denkmalschutz": "Preservation of Historic Urban Areas",
    "naturschutz_landschaftspflege": "Nature Conservation & Landscape Management",
    "betriebliche_investitionen": "Business Investment",
    "konsolidierung_stabilisierung": "Consolidation & Stabilisation",
    "nachfolge": "Business Succession",
    "modernisierung_sanierung": "Modernisation & Refurbishment",
    "soziale_wohnraumfoerderung": "Social Housing",
    "wohnungsbau_erwerb": "Housing Construction & Purchase",
}

# upstream label gap in the FDB export ("[EN] weiterbildung_von_arbeitnehmern")
SUBAREA_DE_FIX = {"weiterbildung_von_arbeitnehmern": "Weiterbildung von Arbeitnehmern"}


def build_grant_areas() -> tuple[list[dict], dict]:
    vocab = read_json("vocab", "fdb_vocabularies.json")["vocabularies"]["foerderbereich"]
    tree = read_csv("vocab", "fdb_foerderbereich_tree.csv")
    children: dict[str, list[dict]] = {}
    for t in tree:
        children.setdefault(t["parent_code"], [])
        if t["child_code"]:
            children[t["parent_code"]].append(t)
    rows = []
    for code, label in vocab.items():
        rows.append(dict(id=uid("grant_area", code), code=code, slug=slugify(code),
                         name_de=label, name_en=AREA_EN[code]))
        for t in children.get(code, []):
            sub = f"{code}/{t['child_code']}"
            name_de = SUBAREA_DE_FIX.get(t["child_code"], t["child_label_de"])
            if name_de.startswith("[EN]"):
                raise ValueError(f"unfixed label gap: {sub}")
            rows.append(dict(id=uid("grant_area", sub), code=sub, slug=slugify(f"{code}-{t['child_code']}"),
                             name_de=name_de, name_en=SUBAREA_EN[t["child_code"]],
                             parent_id=uid("grant_area", code)))
    label_to_code = {label: code for code, label in vocab.items()}
    return rows, label_to_code


# --------------------------------------------------------------------------- eligible entities

ENTITIES = [
    # code, name_de, name_en, plural_de, plural_en, description_de, description_en, aliases
    ("gmbh", "GmbH", "Limited liability company (GmbH)", "GmbHs", "Limited liability companies (GmbH)",
     "Gesellschaft mit beschränkter Haftung, die häufigste Rechtsform kleiner und mittlerer Unternehmen.",
     "Private limited liability company, the most common legal form of small and medium-sized businesses.",
     ["GmbH", "Gesellschaft mit beschränkter Haftung", "Kapitalgesellschaft"]),
    ("ggmbh", "gGmbH", "Non-profit limited liability company (gGmbH)", "gGmbHs",
     "Non-profit limited liability companies (gGmbH)",
     "Als gemeinnützig anerkannte GmbH, die steuerbegünstigte Zwecke verfolgt.",
     "Limited liability company recognised as non-profit that pursues tax-privileged purposes.",
     ["gGmbH", "gemeinnützige GmbH", "Gemeinnützige Gesellschaft mit beschränkter Haftung"]),
    ("ug", "UG (haftungsbeschränkt)", "Entrepreneurial company (UG, limited liability)",
     "UGs (haftungsbeschränkt)", "Entrepreneurial companies (UG, limited liability)",
     "Unternehmergesellschaft, eine Variante der GmbH mit geringem Stammkapital.",
     "Entrepreneurial company, a variant of the GmbH with low minimum share capital.",
     ["UG", "UG (haftungsbeschränkt)", "Unternehmergesellschaft", "Mini-GmbH"]),
    ("ag", "AG", "Stock corporation (AG)", "AGs", "Stock corporations (AG)",
     "Aktiengesellschaft, deren Grundkapital in Aktien zerlegt ist.",
     "Public or private limited company whose share capital is divided into shares.",
     ["AG", "Aktiengesellschaft", "SE", "Europäische Aktiengesellschaft"]),
    ("eg", "eG", "Registered cooperative (eG)", "eGs", "Registered cooperatives (eG)",
     "Eingetragene Genossenschaft, die die Wirtschaft oder die sozialen Belange ihrer Mitglieder fördert.",
     "Registered cooperative that promotes the business or social interests of its members.",
     ["eG", "Genossenschaft", "eingetragene Genossenschaft"]),
    ("gbr", "GbR", "Civil-law partnership (GbR)", "GbRs", "Civil-law partnerships (GbR)",
     "Gesellschaft bürgerlichen Rechts, ein einfacher Zusammenschluss mehrerer Personen zu einem gemeinsamen Zweck.",
     "Civil-law partnership, a simple association of several persons for a common purpose.",
     ["GbR", "Gesellschaft bürgerlichen Rechts", "BGB-Gesellschaft"]),
    ("ohg", "OHG", "General partnership (OHG)", "OHGs", "General partnerships (OHG)",
     "Offene Handelsgesellschaft, deren Gesellschafter unbeschränkt haften.",
     "General commercial partnership whose partners have unlimited liability.",
     ["OHG", "Offene Handelsgesellschaft"]),
    ("kg", "KG", "Limited partnership (KG)", "KGs", "Limited partnerships (KG)",
     "Kommanditgesellschaft mit mindestens einem voll haftenden und einem beschränkt haftenden Gesellschafter.",
     "Limited partnership with at least one general partner and one limited partner.",
     ["KG", "Kommanditgesellschaft"]),
    ("gmbh_co_kg", "GmbH & Co. KG", "GmbH & Co. KG", "GmbH & Co. KGs", "GmbH & Co. KGs",
     "Kommanditgesellschaft, deren voll haftende Gesellschafterin eine GmbH ist.",
     "Limited partnership whose general partner is a limited liability company.",
     ["GmbH & Co. KG", "GmbH & Co KG", "UG (haftungsbeschränkt) & Co. KG"]),
    ("partg", "Partnerschaftsgesellschaft", "Professional partnership (PartG)", "Partnerschaftsgesellschaften",
     "Professional partnerships (PartG)",
     "Zusammenschluss von Angehörigen freier Berufe zur gemeinsamen Berufsausübung.",
     "Partnership of members of the liberal professions practising together.",
     ["PartG", "PartG mbB", "Partnerschaft"]),
    ("einzelunternehmen", "Einzelunternehmen", "Sole proprietorship", "Einzelunternehmen", "Sole proprietorships",
     "Unternehmen einer einzelnen natürlichen Person, eingetragen (e.K.) oder nicht eingetragen.",
     "Business owned by a single natural person, registered (e.K.) or unregistered.",
     ["Einzelunternehmer", "Einzelunternehmerin", "e.K.", "e. K.", "eingetragener Kaufmann",
      "eingetragene Kauffrau", "Gewerbetreibende", "Kleinunternehmer"]),
    ("freiberufler", "Freiberufler/in", "Freelancer", "Freiberufler/innen", "Freelancers",
     "Selbstständig tätige Person in einem freien Beruf, etwa Ärztin, Architekt oder Künstlerin.",
     "Self-employed person in a liberal profession such as a doctor, architect or artist.",
     ["Freiberufler", "Freiberuflerin", "Freie Berufe", "Selbstständige", "Solo-Selbstständige"]),
    ("ev", "Eingetragener Verein (e.V.)", "Registered association (e.V.)", "Eingetragene Vereine",
     "Registered associations (e.V.)",
     "Im Vereinsregister eingetragener, rechtsfähiger Verein, häufig gemeinnützig.",
     "Association with legal capacity entered in the register of associations, often non-profit.",
     ["e.V.", "eV", "Verein", "eingetragener Verein", "Verband", "Vereinigung"]),
    ("nev", "Nicht eingetragener Verein", "Unregistered association", "Nicht eingetragene Vereine",
     "Unregistered associations",
     "Verein ohne Eintragung ins Vereinsregister, etwa eine Initiative oder Bürgergruppe.",
     "Association not entered in the register of associations, such as an initiative or citizens' group.",
     ["nicht rechtsfähiger Verein", "Initiative", "Bürgerinitiative"]),
    ("stiftung_privat", "Stiftung des privaten Rechts", "Foundation under private law",
     "Stiftungen des privaten Rechts", "Foundations under private law",
     "Rechtsfähige Stiftung bürgerlichen Rechts mit eigenem Vermögen und festgelegtem Zweck.",
     "Foundation with legal capacity under civil law with its own assets and a defined purpose.",
     ["Stiftung", "private Stiftung", "rechtsfähige Stiftung", "gemeinnützige Stiftung"]),
    ("stiftung_oeffentlich", "Stiftung des öffentlichen Rechts", "Foundation under public law",
     "Stiftungen des öffentlichen Rechts", "Foundations under public law",
     "Vom Staat durch Gesetz oder Hoheitsakt errichtete Stiftung.",
     "Foundation established by the state through a law or a sovereign act.",
     ["öffentliche Stiftung", "öffentlich-rechtliche Stiftung", "kirchliche Stiftung"]),
    ("kdoer", "Körperschaft des öffentlichen Rechts", "Public-law corporation",
     "Körperschaften des öffentlichen Rechts", "Public-law corporations",
     "Mitgliedschaftlich verfasste Einrichtung des öffentlichen Rechts, etwa Kammer oder Kirche.",
     "Membership-based public-law body such as a chamber or a church.",
     ["KdöR", "K.d.ö.R.", "Körperschaft", "Kammer", "Kirche"]),
    ("aoer", "Anstalt des öffentlichen Rechts", "Public-law institution",
     "Anstalten des öffentlichen Rechts", "Public-law institutions",
     "Rechtsfähige Verwaltungseinrichtung des öffentlichen Rechts, etwa eine Förderbank oder Rundfunkanstalt.",
     "Public-law administrative body with legal capacity, such as a development bank or broadcaster.",
     ["AöR", "A.d.ö.R.", "Anstalt", "öffentliche Einrichtung", "Behörde"]),
    ("kommune", "Kommune", "Municipality", "Kommunen", "Municipalities",
     "Gebietskörperschaft der kommunalen Ebene wie Gemeinde, Stadt oder Landkreis.",
     "Local authority such as a municipality, town or district.",
     ["Gemeinde", "Stadt", "Landkreis", "Kreis", "Gebietskörperschaft", "Kommunalverwaltung",
      "Zweckverband", "Gemeindeverband"]),
    ("hochschule", "Hochschule", "University", "Hochschulen", "Universities",
     "Staatliche oder staatlich anerkannte Universität, Fachhochschule oder Kunsthochschule.",
     "State or state-recognised university, university of applied sciences or art school.",
     ["Universität", "Fachhochschule", "Hochschule für angewandte Wissenschaften", "HAW", "Uni"]),
    ("forschungseinrichtung", "Außeruniversitäre Forschungseinrichtung", "Non-university research institution",
     "Außeruniversitäre Forschungseinrichtungen", "Non-university research institutions",
     "Forschungsinstitut außerhalb der Hochschulen, etwa der Fraunhofer-, Max-Planck-, Helmholtz- oder Leibniz-Gemeinschaft.",
     "Research institute outside universities, for example in the Fraunhofer, Max Planck, Helmholtz or Leibniz networks.",
     ["Forschungseinrichtung", "Forschungsinstitut", "Institut", "Fraunhofer", "Max-Planck", "Helmholtz", "Leibniz"]),
    ("bildungseinrichtung", "Bildungseinrichtung", "Educational institution", "Bildungseinrichtungen",
     "Educational institutions",
     "Einrichtung der schulischen, beruflichen oder allgemeinen Bildung wie Schule, Bildungsträger oder Volkshochschule.",
     "Institution of school, vocational or general education such as a school, training provider or adult education centre.",
     ["Bildungsträger", "Schule", "Berufsschule", "Volkshochschule", "Bildungswerk", "Akademie"]),
    ("privatperson", "Privatperson", "Private individual", "Privatpersonen", "Private individuals",
     "Natürliche Person, die nicht als Unternehmen oder Organisation handelt.",
     "Natural person acting neither as a business nor as an organisation.",
     ["Natürliche Person", "Bürger", "Bürgerin", "Einzelperson", "Privathaushalt", "Eigentümer"]),
]

# Förderberechtigte label (FDB) → eligible entity codes
LABEL_ENTITIES = {
    "Unternehmen": ["gmbh", "ug", "ag", "eg", "gbr", "ohg", "kg", "gmbh_co_kg", "partg",
                    "einzelunternehmen", "freiberufler"],
    "Existenzgründer/in": ["einzelunternehmen", "freiberufler", "gmbh", "ug", "gbr"],
    "Verband/Vereinigung": ["ev"],
    "Kommune": ["kommune"],
    "Hochschule": ["hochschule"],
    "Forschungseinrichtung": ["forschungseinrichtung"],
    "Öffentliche Einrichtung": ["kdoer", "aoer", "stiftung_oeffentlich"],
    "Privatperson": ["privatperson"],
    "Bildungseinrichtung": ["bildungseinrichtung"],
}


def build_entities() -> list[dict]:
    rows = []
    for code, nde, nen, pde, pen, dde, den, aliases in ENTITIES:
        rows.append(dict(id=uid("eligible_entity", code), code=code, slug=slugify(code), name_de=nde, name_en=nen,
                         name_plural_de=pde, name_plural_en=pen, description_de=dde, description_en=den,
                         aliases=aliases))
    return rows


# --------------------------------------------------------------------------- target groups

# English names (and extra aliases) for the 9 Förderberechtigte
FDB_TG_EN = {
    "bildungseinrichtung": ("Educational institutions", ["Bildungseinrichtungen", "Bildungsträger", "Schulen"]),
    "existenzgruenderin": ("Business founders", ["Existenzgründer", "Existenzgründerin", "Gründer", "Gründerin",
                                                 "Start-ups"]),
    "forschungseinrichtung": ("Research institutions", ["Forschungseinrichtungen", "Institut", "Forschungsinstitut"]),
    "hochschule": ("Universities", ["Hochschulen", "Universität", "Fachhochschule", "Hochschulen und Forschung"]),
    "kommune": ("Municipalities", ["Kommunen", "Gemeinde", "Stadt", "Landkreis", "Zweckverband"]),
    "oeffentliche_einrichtung": ("Public institutions", ["Öffentliche Einrichtungen", "Behörde", "Amt",
                                                         "Öffentlicher Träger"]),
    "privatperson": ("Private individuals", ["Privatpersonen", "Natürliche Personen", "Einzelperson", "Bürger"]),
    "unternehmen": ("Companies", ["KMU", "Firma", "Betrieb", "Unternehmer"]),
    "verband_vereinigung": ("Associations & federations", ["Verbände", "Verband", "Vereinigung", "Dachverband",
                                                           "Fachverband"]),
}
# NGO taxonomy target groups merged into an FDB Förderberechtigte (dedupe)
NGO_TG_MERGE = {
    "verbaende": "verband_vereinigung",
    "kommunen": "kommune",
    "hochschulen_und_forschung": "hochschule",
    "unternehmen": "unternehmen",
    "oeffentliche_einrichtungen": "oeffentliche_einrichtung",
    "natuerliche_personen": "privatperson",
    "bildungstraeger": "bildungseinrichtung",
}
NGO_TG_EN = {
    "eingetragene_vereine": "Registered associations",
    "gemeinnuetzige_organisationen": "Non-profit organisations",
    "sportvereine": "Sports clubs",
    "kultureinrichtungen": "Cultural institutions",
    "jugendorganisationen": "Youth organisations",
    "wohlfahrtsverbaende": "Welfare associations",
    "stiftungen": "Foundations",
    "religionsgemeinschaften": "Religious communities",
    "umweltorganisationen": "Environmental organisations",
    "migrantenorganisationen": "Migrant organisations",
    "soziale_dienste": "Social services",
    "freiwilligenorganisationen": "Volunteer organisations",
    "tierschutzvereine": "Animal welfare associations",
    "koerperschaften": "Public-law corporations",
    "berufliche_schulen": "Vocational schools",
    "ehrenamtsorganisationen": "Voluntary organisations",
    "integrationsagenturen": "Integration agencies",
    "jugendhilfe_traeger": "Youth welfare providers",
    "beratungsstellen": "Counselling centres",
    "betreuungsvereine": "Legal guardianship associations",
    "landwirtschaftliche_unternehmen": "Agricultural businesses",
    "forstbetriebsgemeinschaften": "Forestry associations",
    "eigentuemergemeinschaften": "Owners' associations",
    "handwerkskammern": "Chambers of crafts",
    "industriekammern": "Chambers of industry and commerce",
    "suchtberatungsstellen": "Addiction counselling centres",
    "familienberatungsstellen": "Family counselling centres",
    "zuechtervereinigungen": "Breeders' associations",
    "juristische_personen": "Legal entities",
}


def build_target_groups() -> tuple[list[dict], dict]:
    fdb = read_json("vocab", "fdb_vocabularies.json")["vocabularies"]["foerderberechtigte"]
    tax = parse_taxonomy_yaml(os.path.join(SRC, "vocab", "exlab_ngo_taxonomy.yaml"))
    rows, by_code = [], {}
    for code, label in fdb.items():
        en, aliases = FDB_TG_EN[code]
        r = dict(id=uid("target_group", code), code=code, slug=slugify(code), name_de=label, name_en=en,
                 aliases=list(aliases))
        rows.append(r)
        by_code[code] = r
    for z in tax["zielgruppen"]:
        if z["id"] in NGO_TG_MERGE:
            tgt = by_code[NGO_TG_MERGE[z["id"]]]
            for a in [z["label"], *z.get("keywords", [])]:
                if a not in tgt["aliases"] and a != tgt["name_de"]:
                    tgt["aliases"].append(a)
            continue
        r = dict(id=uid("target_group", z["id"]), code=z["id"], slug=slugify(z["id"]), name_de=z["label"],
                 name_en=NGO_TG_EN[z["id"]], aliases=[k for k in z.get("keywords", []) if k != z["label"]])
        rows.append(r)
        by_code[z["id"]] = r
    label_to_code = {label: code for code, label in fdb.items()}
    return rows, label_to_code


# --------------------------------------------------------------------------- providers

# Obvious spelling/abbreviation variants of the same body in funding_body → canonical name
PROVIDER_MERGE = {
    "Kreditansatalt für Wiederaufbau (KfW)": "Kreditanstalt für Wiederaufbau (KfW)",
    "Sächisches Staatsministerium der Justiz und für Demokratie, Europa und Gleichstellung":
        "Sächsisches Staatsministerium der Justiz und für Demokratie, Europa und Gleichstellung",
    "Sächsisches Staatsministerium für Energie, Klimaschutz, Umwelt und Landwirtschaft":
        "Sächsisches Staatsministerium für Energie, Klimaschutz, Umwelt und Landwirtschaft (SMUL)",
    "Bayerisches Staatsministerium der Finanzen und für Heimat":
        "Bayerisches Staatsministerium der Finanzen und für Heimat (StMFH)",
    "Bayerisches Staatsministerium für Umwelt und Verbraucherschutz":
        "Bayerisches Staatsministerium für Umwelt und Verbraucherschutz (StMUV)",
}

# explicit types (checked before the name heuristics)
PROVIDER_TYPE_EXPLICIT = {
    "Der Beauftragte der Bundesregierung für Kultur und Medien (BKM)": "federal_ministry",
    "Bundeskanzleramt": "federal_ministry",
    "Kreditanstalt für Wiederaufbau (KfW)": "federal_funding_bank",
    "Landwirtschaftliche Rentenbank (LR)": "federal_funding_bank",
    "Europäischer Investitionsfonds (EIF)": "european_union",
    "Kulturstiftung des Bundes (KSB)": "federal_foundation",
    "Deutsche Bundesstiftung Umwelt (DBU)": "federal_foundation",
    "Bayerische Transformations- und Forschungsstiftung": "public_foundation",
    "Deutsches Zentrum für Luft- und Raumfahrt e.V. (DLR)": "research_institution",
    "Sächsischer Landtag": "other_type",
}


def provider_type(name: str) -> str:
    if name in PROVIDER_TYPE_EXPLICIT:
        return PROVIDER_TYPE_EXPLICIT[name]
    if name.startswith("Bundesministerium"):
        return "federal_ministry"
    if re.search(r"Europäische|Europäischer|\(EU\)", name):
        return "european_union"
    if re.search(r"Staatsministerium|Ministerium|Senatsverwaltung|^Senator|^Behörde für|Staatskanzlei|"
                 r"Finanzministerium", name):
        return "state_ministry"
    if re.search(r"Bürgschaftsbank|Bürgschaftsbanken|Beteiligungsgesellschaft|Aufbaubank|Investitionsbank|"
                 r"Strukturbank|Landesbodenkreditanstalt|IBB Capital", name):
        return "public_agency"
    if re.search(r"^Bundes(agentur|amt|zentrale)|anstalt|Innovationsausschuss|beauftragte", name, re.I):
        return "public_agency"
    if "Stiftung" in name or "stiftung" in name:
        return "private_foundation"
    return "other_type"


def build_providers(programmes) -> tuple[list[dict], dict]:
    names = []
    for p in read_csv("fdb", "providers.csv"):  # ordered by programme count (source order)
        n = PROVIDER_MERGE.get(p["funding_body_name_de"], p["funding_body_name_de"])
        if n not in names:
            names.append(n)
    for r in programmes:  # any funding_body not in providers.csv (none today) is appended
        n = PROVIDER_MERGE.get(r["funding_body"], r["funding_body"])
        if n and n not in names:
            names.append(n)
    rows, by_name, used = [], {}, set()
    for n in names:
        rows.append(dict(id=uid("grant_provider", n), slug=unique_slug(slugify(n), used), name=n,
                         type=provider_type(n), created_at=TS, updated_at=TS))
        by_name[n] = rows[-1]["id"]
    return rows, by_name


# --------------------------------------------------------------------------- keyword classifier

# Each rule: (regex over title + short_description + description, [grant area codes]).
# Patterns are matched case-insensitively unless they start with "(?-i)".
AREA_RULES = [
    (r"arbeitsplätze|arbeitslos|langzeitarbeitslos|beschäftigung|arbeitsmarkt|arbeitssuchend|arbeitsuchend|"
     r"fachkräfte|arbeitsschutz|arbeitnehmer|entlassung", ["arbeit"]),
    (r"arbeitsschutz|arbeitsgestaltung", ["arbeit/arbeitsgestaltung_arbeitsschutz"]),
    (r"langzeitarbeitslos|arbeitslos", ["arbeit/eingliederung_besonderer_zielgruppen"]),
    (r"ausbildung|weiterbildung|qualifizierung|berufsorientierung|berufsvorbereitung|auszubildende|lehrling|"
     r"meister|studium|studierende|stipendi|(?<!hoch)schule|bildung\b|lernen|alphabetisierung|"
     r"lesen und schreiben|sprachkurs|kurse\b", ["aus_weiterbildung"]),
    (r"weiterbildung", ["aus_weiterbildung/weiterbildung_von_arbeitnehmern"]),
    (r"ausbildungsplatz|ausbildungsplätze|auszubildende|lehrling|betriebliche ausbildung",
     ["aus_weiterbildung/betriebliche_ausbildung"]),
    (r"stipendi|studierende|studienkredit|studium", ["aus_weiterbildung/studienfoerderung"]),
    (r"export|auslandsmärkt|auslandsinvest|auslandsgeschäft|ausländische märkte|außenwirtschaft|"
     r"internationalisierung|markterschließung|"
     r"entwicklungszusammenarbeit|entwicklungsländer|schwellenländer", ["aussenwirtschaft"]),
    (r"export", ["aussenwirtschaft/exportfinanzierung"]),
    (r"entwicklungszusammenarbeit|entwicklungsländer|schwellenländer|globaler süden",
     ["aussenwirtschaft/entwicklungszusammenarbeit"]),
    (r"messe", ["messen_ausstellungen"]),
    (r"auslandsmesse|messen im ausland|internationale messe|messebeteiligung", ["messen_ausstellungen/auslandsmessen"]),
    (r"beratung|berater|coaching", ["beratung"]),
    (r"corona|covid|pandemie", ["corona"]),
    (r"digital|software|künstliche intelligenz|\bki\b|breitband|it-sicherheit|cybersicherheit|"
     r"e-government|daten(?!schutz)|internet|gigabit|extended realit|virtual reality|\bxr\b", ["digitalisierung"]),
    (r"energieeffizien|erneuerbare energie|energie|wärme|photovoltaik|solar|wind|wasserstoff|geothermie|"
     r"klimaschutz|co2|treibhausgas|dekarbonisierung|heizung|speicher|effiziente gebäude|gebäudeenergie", ["energieeffizienz_erneuerbare_energien"]),
    (r"existenzgründ|gründung|gründer|start-up|startup|jungunternehm|unternehmensnachfolge|nachfolge",
     ["existenzgruendung_festigung"]),
    (r"forschung", ["forschung_innovation_themenoffen/forschung_entwicklung"]),
    (r"innovation", ["forschung_innovation_themenoffen/betriebliche_innovationen"]),
    (r"technologietransfer|patent|verwertung", ["forschung_innovation_themenoffen/patentierung_verwertung"]),
    (r"verbund|netzwerk|cluster|kooperation", ["forschung_innovation_themenoffen/kooperationen_netzwerke"]),
    (r"(biotechnolog|lebenswissenschaft|biowissenschaft|bioökonomie|medizin|gesundheitsforschung|"
     r"werkstoff|material|nanotechnolog|photonik|optische|mikroelektronik|mikrosystem|quanten|"
     r"luftfahrt|raumfahrt|schifffahrt|meerestechnik|maritim|sicherheitsforschung|geowissenschaft|"
     r"klimaforschung|meeresforschung|batterie|produktionstechn|geisteswissenschaft|sozialwissenschaft)",
     ["forschung_innovation_themenspezifisch"]),
    (r"biotechnolog|lebenswissenschaft|biowissenschaft|bioökonomie",
     ["forschung_innovation_themenspezifisch/biowissenschaften"]),
    (r"medizin|gesundheitsforschung|klinische studie",
     ["forschung_innovation_themenspezifisch/gesundheit_medizin"]),
    (r"werkstoff|material", ["forschung_innovation_themenspezifisch/werkstoffe"]),
    (r"nanotechnolog", ["forschung_innovation_themenspezifisch/nanotechnologie"]),
    (r"photonik|optische", ["forschung_innovation_themenspezifisch/optische_technologien"]),
    (r"mikroelektronik|mikrosystem", ["forschung_innovation_themenspezifisch/mikrosysteme"]),
    (r"luftfahrt|raumfahrt", ["forschung_innovation_themenspezifisch/luft_raumfahrt"]),
    (r"schifffahrt|meerestechnik|maritim", ["forschung_innovation_themenspezifisch/schifffahrt_meerestechnik"]),
    (r"sicherheitsforschung|zivile sicherheit", ["forschung_innovation_themenspezifisch/sicherheitsforschung"]),
    (r"geisteswissenschaft|sozialwissenschaft",
     ["forschung_innovation_themenspezifisch/wirtschafts_sozial_geisteswissenschaften"]),
    (r"frauen|gründerinnen|unternehmerinnen|wissenschaftlerinnen|gleichstellung", ["frauenfoerderung"]),
    (r"gesundheit|pflege|sozial|behinder|inklusion|integration|migrant|geflüchtet|flüchtling|familie|"
     r"kinder|jugend|senior|ehrenamt|engagement|armut|obdachlos|sucht|prävention|krankenhaus|"
     r"barrierefrei|asyl|schutzsuchend|zugewander|psychiatr|ältere menschen|im alter\b", ["gesundheit_soziales"]),
    (r"behinder|inklusion|barrierefrei", ["gesundheit_soziales/behinderte_menschen"]),
    (r"ehrenamt|bürgerschaftlich|engagement", ["gesundheit_soziales/buergerschaftliches_engagement"]),
    (r"integration|migrant|geflüchtet|flüchtling|zuwander|zugewander|asyl|schutzsuchend", ["gesundheit_soziales/integration"]),
    (r"kinder|jugend|familie", ["gesundheit_soziales/kinder_jugendliche_familien"]),
    (r"senior|pflege|ältere|im alter\b", ["gesundheit_soziales/senioren_pflege"]),
    (r"gesundheit|krankenhaus|prävention|sucht|psychiatr", ["gesundheit_soziales/gesundheit"]),
    (r"infrastruktur|breitband|straße|radweg|radverkehr|öpnv|schiene|verkehrswege|abwasser|wasserversorgung|"
     r"kläranlage|gewerbegebiet|gewerbeflächen|gigabit|seilbahn|skigebiet|schwimmbad", ["infrastruktur"]),
    (r"breitband|glasfaser|mobilfunk|gigabit", ["infrastruktur/information_kommunikation"]),
    (r"tourismus|touristisch|seilbahn|skigebiet", ["infrastruktur/tourismus"]),
    (r"kultur|kunst|künstler|museum|theater|musik|film|medien|sport|denkmal|bibliothek|literatur|kreativ|"
     r"schwimmbad", ["kultur_medien_sport"]),
    (r"denkmal", ["kultur_medien_sport/denkmalschutz_pflege"]),
    (r"film|fernseh|kino", ["kultur_medien_sport/film_fernsehen"]),
    (r"kultur|kunst|künstler|museum|theater|musik|literatur", ["kultur_medien_sport/kunst_kultur"]),
    (r"politische bildung|demokratie", ["kultur_medien_sport/politische_bildung"]),
    (r"sport|schwimmbad", ["kultur_medien_sport/sport_sportstaetten"]),
    (r"landwirt|agrar|ländlich|\bdorf|\bdörf|forst|\bwald|wälder|\bfisch|fischerei|aquakultur|weinbau|"
     r"tierhaltung|tierwohl|gartenbau|lebensmittelwirtschaft|ernährungswirtschaft|\bbauer|\bbäuer|bergbauer|"
     r"bergbäuer|\balm\b",
     ["landwirtschaft_laendliche_entwicklung"]),
    (r"ländlich|\bdorf|\bdörf|\bleader\b", ["landwirtschaft_laendliche_entwicklung/laendliche_entwicklung"]),
    (r"forst|\bwald|wälder", ["landwirtschaft_laendliche_entwicklung/forstwirtschaft"]),
    (r"\bfisch|fischerei|aquakultur", ["landwirtschaft_laendliche_entwicklung/fischwirtschaft"]),
    (r"ökologischer landbau|ökolandbau|agrarumwelt|vertragsnaturschutz",
     ["landwirtschaft_laendliche_entwicklung/besondere_formen_der_landbewirtschaftung"]),
    (r"hochwasser|küstenschutz|gewässer", ["landwirtschaft_laendliche_entwicklung/wasserwirtschaft_kuestenschutz"]),
    (r"mobilität|verkehr|elektrofahrzeug|e-mobilität|elektromobilität|fahrzeug|radverkehr|fahrrad|"
     r"ladeinfrastruktur|öpnv|logistik|bahn\b|schienen|lkw|bus(?:se)?\b", ["mobilitaet"]),
    (r"regionalförderung|regionale wirtschaft|regionalen wirtschaft|strukturwandel|strukturschwach|grw|"
     r"gemeinschaftsaufgabe|kohleregion|braunkohle|regionalentwicklung|landesentwicklung|interkommunal|"
     r"interreg|territoriale zusammenarbeit|grenzüberschreitend", ["regionalfoerderung"]),
    (r"smart city|smart cities|smarte region|smart region", ["smart_cities_regionen"]),
    (r"städtebau|stadterneuerung|stadtentwicklung|stadtumbau|innenstädte|innenstadt|ortskern|quartier|"
     r"soziale stadt|ortsmitte", ["staedtebau_stadterneuerung"]),
    (r"wohnraum|wohnung|wohneigentum|(?<!nicht)wohngebäude|eigenheim|mietwohn|modernisierung von wohn|wohnen\b|"
     r"baukindergeld|immobilie", ["wohnungsbau_modernisierung"]),
    (r"sozialer wohn|soziale wohnraum|mietpreis|belegungsbind", ["wohnungsbau_modernisierung/soziale_wohnraumfoerderung"]),
    (r"umwelt|naturschutz|natürlicher klimaschutz|wasserwirtschaft|biodiversität|artenschutz|landschaftspflege|klimaanpassung|ressourceneffizien|"
     r"kreislaufwirtschaft|recycling|abfall|gewässerschutz|boden|lärm|emission|moor", ["umwelt_naturschutz"]),
    (r"naturschutz|biodiversität|artenschutz|landschaftspflege|moor",
     ["umwelt_naturschutz/naturschutz_landschaftspflege"]),
    (r"bürgschaft|risikokapital|wagniskapital|venture capital|beteiligungskapital|stille beteiligung|"
     r"eigenkapital|mezzanin|beteiligungsgeber|beteiligungsprogramm", ["unternehmensfinanzierung"]),
    (r"liquidität|betriebsmittel", ["unternehmensfinanzierung/betriebsmittel"]),
    (r"investition", ["unternehmensfinanzierung/betriebliche_investitionen"]),
    (r"konsolidierung|stabilisierung|sanierung von unternehmen|krise", ["unternehmensfinanzierung/konsolidierung_stabilisierung"]),
    (r"unternehmensnachfolge|betriebsübernahme|nachfolge", ["unternehmensfinanzierung/nachfolge"]),
]
# a sub-area is only kept when its parent was also matched (keeps precision)

# target-group rules (codes from build_target_groups)
TG_RULES = [
    (r"unternehmen|\bkmu\b|betrieb|mittelstand|gewerbetreibend|handwerk|firmen", ["unternehmen"]),
    (r"existenzgründ|gründerinnen|gründer\b|gründer |start-up|startup|neugründung|gründungswillig",
     ["existenzgruenderin"]),
    (r"hochschule|universität|fachhochschule", ["hochschule"]),
    (r"forschungseinrichtung|forschungsinstitut|forschungsinstitution|institute\b", ["forschungseinrichtung"]),
    (r"kommune|kommunal|gemeinde|landkreis|städte|zweckverb", ["kommune"]),
    (r"verband|verbände|vereinigung|dachverband", ["verband_vereinigung"]),
    (r"\bvereine?\b|vereinen\b|\be\.\s?v\.", ["eingetragene_vereine"]),
    (r"privatperson|bürgerinnen und bürger|eigentümerinnen und eigentümer|privathaushalt|natürliche person|"
     r"studierende|schülerinnen|auszubildende", ["privatperson"]),
    (r"schule|bildungseinrichtung|bildungsträger|bildungsstätte|volkshochschul|weiterbildungseinrichtung",
     ["bildungseinrichtung"]),
    (r"öffentliche einrichtung|öffentlichen einrichtung|körperschaften des öffentlichen|anstalten des öffentlichen|"
     r"behörde|öffentliche träger|öffentlichen träger", ["oeffentliche_einrichtung"]),
    (r"gemeinnützig|nichtregierungsorganisation|\bngo", ["gemeinnuetzige_organisationen"]),
    (r"sportverein|sportverbände|sportverband|sportbund", ["sportvereine"]),
    (r"museum|museen|theater|bibliothek|kultureinrichtung", ["kultureinrichtungen"]),
    (r"jugendverband|jugendring|jugendorganisation", ["jugendorganisationen"]),
    (r"wohlfahrtsverb|caritas|diakonie", ["wohlfahrtsverbaende"]),
    (r"stiftungen", ["stiftungen"]),
    (r"kirche|religionsgemeinschaft", ["religionsgemeinschaften"]),
    (r"migrantenorganisation|migrantenselbstorganisation", ["migrantenorganisationen"]),
    (r"landwirt|agrarbetrieb|landwirtschaftliche(n)? (unternehmen|betrieb)", ["landwirtschaftliche_unternehmen"]),
    (r"waldbesitz|forstbetrieb|forstwirtschaftliche zusammenschlüsse", ["forstbetriebsgemeinschaften"]),
    (r"wohnungseigentümergemeinschaft|eigentümergemeinschaft", ["eigentuemergemeinschaften"]),
    (r"handwerkskammer", ["handwerkskammern"]),
    (r"industrie- und handelskammer|\bihk\b", ["industriekammern"]),
    (r"beratungsstelle", ["beratungsstellen"]),
    (r"ehrenamtlich", ["ehrenamtsorganisationen"]),
]

# entity rules
ENTITY_RULES = [
    (r"gemeinnützige gmbh|ggmbh", ["ggmbh"]),
    (r"genossenschaft", ["eg"]),
    (r"\bvereine?\b|vereinen\b|\be\.\s?v\.|verbände|verband\b", ["ev"]),
    (r"stiftungen", ["stiftung_privat"]),
    (r"freiberufl|freie berufe|freien berufe|selbstständige|selbständige", ["freiberufler"]),
    (r"einzelunternehm", ["einzelunternehmen"]),
    (r"kommune|kommunal|gemeinde|landkreis|zweckverb", ["kommune"]),
    (r"hochschule|universität|fachhochschule", ["hochschule"]),
    (r"forschungseinrichtung|forschungsinstitut", ["forschungseinrichtung"]),
    (r"schule|bildungseinrichtung|bildungsträger|bildungsstätte|volkshochschul", ["bildungseinrichtung"]),
    (r"privatperson|bürgerinnen und bürger|eigentümerinnen und eigentümer|privathaushalt|natürliche person|"
     r"studierende", ["privatperson"]),
    (r"körperschaften des öffentlichen|körperschaft des öffentlichen", ["kdoer"]),
    (r"anstalten des öffentlichen|anstalt des öffentlichen", ["aoer"]),
]
# target groups implying entities when derived (same mapping as the FDB labels)
TG_TO_ENTITY_LABEL = {"unternehmen": "Unternehmen", "existenzgruenderin": "Existenzgründer/in"}


def compile_rules(rules):
    return [(re.compile(p, re.IGNORECASE), codes) for p, codes in rules]


AREA_RX = compile_rules(AREA_RULES)
TG_RX = compile_rules(TG_RULES)
ENTITY_RX = compile_rules(ENTITY_RULES)


def apply_rules(rx, text):
    out = []
    for pat, codes in rx:
        if pat.search(text):
            for c in codes:
                if c not in out:
                    out.append(c)
    return out


RESEARCH_RX = re.compile(r"forschung|innovation|technologie|wissenschaft|\bfue\b|f&e|verbundvorhaben|"
                         r"verbundprojekt|pilotprojekt|modellvorhaben|demonstrationsvorhaben|wissenstransfer", re.IGNORECASE)
OPEN_RX = re.compile(r"themenoffen|technologieoffen|technologie- und branchenoffen|branchenoffen|"
                     r"innovationsgutschein|zentrales innovationsprogramm|\bzim\b", re.IGNORECASE)
TOPIC_RX = re.compile(r"zum thema|themenfeld|im bereich|schwerpunkt", re.IGNORECASE)


FIN_RX = re.compile(r"darlehen|kredit|liquidität|finanzierung|investition", re.IGNORECASE)
BIZ_RX = re.compile(r"unternehmen|\bkmu\b|betrieb|mittelstand|gewerb|existenzgründ|gründer|selbstständig|"
                    r"freiberuf", re.IGNORECASE)


def classify_areas(text: str) -> list[str]:
    hits = apply_rules(AREA_RX, text)
    if "unternehmensfinanzierung" not in hits and FIN_RX.search(text) and BIZ_RX.search(text):
        hits.append("unternehmensfinanzierung")
    if RESEARCH_RX.search(text):
        topical = [c for c in hits if "/" not in c and c not in (
            "forschung_innovation_themenspezifisch", "unternehmensfinanzierung", "beratung", "aus_weiterbildung")]
        if OPEN_RX.search(text) or not (topical or TOPIC_RX.search(text)
                                        or "forschung_innovation_themenspezifisch" in hits):
            hits.insert(0, "forschung_innovation_themenoffen")
        elif "forschung_innovation_themenspezifisch" not in hits:
            hits.insert(0, "forschung_innovation_themenspezifisch")
    parents = {c for c in hits if "/" not in c}
    return [c for c in hits if "/" not in c or c.split("/")[0] in parents]


def ordered(codes, order):
    return sorted(set(codes), key=order.index)


# --------------------------------------------------------------------------- grants

GRANT_TYPE = {"zuschuss": "subsidy", "kredit": "loan", "buergschaft": "guarantee", "beteiligung": "equity"}


def grant_slug(url: str) -> str:
    seg = url.rstrip("/").rsplit("/", 1)[-1]
    if seg.endswith(".html"):
        seg = seg[: -len(".html")]
    seg = seg.lower().replace("_", "-")
    return re.sub(r"-+", "-", seg).strip("-")


def build_grants(programmes, state_map, area_rows, area_label_to_code, tg_rows, tg_label_to_code,
                 entity_rows, provider_rows, provider_by_name):
    fulltexts = {}
    for f in read_json("fdb", "fulltexts.json"):
        fulltexts.setdefault(f["title"], f)  # first occurrence wins (titles are unique today)
    area_order = [a["code"] for a in area_rows]
    area_id = {a["code"]: a["id"] for a in area_rows}
    tg_order = [t["code"] for t in tg_rows]
    tg_id = {t["code"]: t["id"] for t in tg_rows}
    ent_order = [e["code"] for e in entity_rows]
    ent_id = {e["code"]: e["id"] for e in entity_rows}

    # path-segment fallback: segment == the "(ABBR)" of exactly one federal provider
    abbr_to_provider: dict[str, list[str]] = {}
    for p in provider_rows:
        m = re.search(r"\(([^()]+)\)\s*$", p["name"])
        if m and p["type"] in ("federal_ministry", "federal_funding_bank"):
            abbr_to_provider.setdefault(m.group(1).lower(), []).append(p["id"])

    rows, used, stats = [], set(), Counter()
    for r in programmes:
        url = r["fdb_url"]
        g = dict(id=uid("grant", url), slug=unique_slug(grant_slug(url), used), title=r["title"])
        ft = fulltexts.get(r["title"])
        teaser = r["teaser_de"].strip()
        if teaser:
            g["short_description"] = teaser
        elif ft and ft.get("kurztext", "").strip():
            g["short_description"] = ft["kurztext"].strip()
            stats["short_description_from_fulltexts"] += 1
        if ft and ft.get("volltext", "").strip():
            g["description"] = ft["volltext"].strip()
            stats["description_fulltext"] += 1
        elif "short_description" in g:
            g["description"] = g["short_description"]
        g["grant_type"] = GRANT_TYPE[r["funding_type"]]
        body = PROVIDER_MERGE.get(r["funding_body"], r["funding_body"])
        if body:
            g["grant_provider_id"] = provider_by_name[body]
        else:
            cand = abbr_to_provider.get(r["fdb_path_segment"].lower(), [])
            if len(cand) == 1:
                g["grant_provider_id"] = cand[0]
                stats["provider_from_path_segment"] += 1
            else:
                stats["provider_missing"] += 1
        g["region_ids"] = [state_map[c] for c in r["state_codes"].split("|")]

        ea = [x for x in r["eligible_applicants_labels"].split(", ") if x]
        fa_raw = r["funding_area_labels"].replace("Kultur, Medien & Sport", "Kultur_Medien_Sport")
        fa = [x.replace("Kultur_Medien_Sport", "Kultur, Medien & Sport") for x in fa_raw.split(", ") if x]
        if ea or fa:
            classification = "labelled"
            areas = []
            for lab in fa:
                lab = {"Wohnungsbau & Modernisierung": "Wohnungsbau & -modernisierung"}.get(lab, lab)
                areas.append(area_label_to_code[lab])
            tgs = [tg_label_to_code[lab] for lab in ea]
            ents = [e for lab in ea for e in LABEL_ENTITIES[lab]]
        else:
            classification = "derived"
            text = " ".join(x for x in (g["title"], g.get("short_description", ""), g.get("description", "")) if x)
            areas = classify_areas(text)
            tgs = apply_rules(TG_RX, text)
            ents = apply_rules(ENTITY_RX, text)
            for t in tgs:
                if t in TG_TO_ENTITY_LABEL:
                    ents += LABEL_ENTITIES[TG_TO_ENTITY_LABEL[t]]
                elif t in tg_label_to_code.values():
                    label = next(k for k, v in tg_label_to_code.items() if v == t)
                    ents += LABEL_ENTITIES[label]
        if areas:
            g["grant_area_ids"] = [area_id[c] for c in ordered(areas, area_order)]
        if tgs:
            g["target_group_ids"] = [tg_id[c] for c in ordered(tgs, tg_order)]
        if ents:
            g["eligible_entity_ids"] = [ent_id[c] for c in ordered(ents, ent_order)]
        g["ongoing_grant"] = True
        if ft and ft.get("rechtliche_voraussetzungen", "").strip():
            g["eligibility_requirements"] = [ft["rechtliche_voraussetzungen"].strip()]
        if r["application_url"].strip():
            g["application_links"] = [r["application_url"].strip()]
        g["guideline_links"] = [url]
        g["attribution"] = ATTRIBUTION.format(title=r["title"], url=url)
        g["classification"] = classification
        g["created_at"] = TS
        g["updated_at"] = TS
        stats[classification] += 1
        stats[f"{classification}_with_area"] += bool(areas)
        rows.append(g)
    return rows, stats


# --------------------------------------------------------------------------- validation

def validate(files: dict[str, list[dict]]) -> None:
    def walk_strings(v, where):
        if isinstance(v, str):
            assert v.strip() != "", f"empty string in {where}"
        elif isinstance(v, list):
            for x in v:
                walk_strings(x, where)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk_strings(x, f"{where}.{k}")

    ids = {}
    for name, rows in files.items():
        slugs, codes = set(), set()
        ids[name] = {r["id"] for r in rows}
        assert len(ids[name]) == len(rows), f"duplicate id in {name}"
        for r in rows:
            walk_strings(r, f"{name}:{r.get('slug')}")
            assert UUID_RE.match(r["id"]), r["id"]
            assert SLUG_RE.match(r["slug"]), f"bad slug {r['slug']!r} in {name}"
            assert r["slug"] not in slugs, f"duplicate slug {r['slug']} in {name}"
            slugs.add(r["slug"])
            if "code" in r:
                assert r["code"] not in codes, f"duplicate code {r['code']} in {name}"
                codes.add(r["code"])

    regions = {r["id"]: r for r in files["regions"]}
    for r in files["regions"]:
        if r["region_type"] == "continent":
            assert "parent_id" not in r
        else:
            p = regions[r["parent_id"]]
            want = {"country": "continent", "state": "country"}[r["region_type"]]
            assert p["region_type"] == want, r["code"]
    areas = {a["id"]: a for a in files["grant_areas"]}
    for a in files["grant_areas"]:
        if "parent_id" in a:
            assert "parent_id" not in areas[a["parent_id"]], a["code"]
    types = {"federal_ministry", "state_ministry", "municipality", "public_agency", "european_union",
             "federal_funding_bank", "private_foundation", "public_foundation", "political_foundation",
             "federal_foundation", "industry_chamber", "research_institution", "university",
             "non_profit_organization", "church_organization", "lottery_fund", "private_company", "other_type"}
    for p in files["grant_providers"]:
        assert p["type"] in types, p["name"]
    for g in files["grants"]:
        assert g["grant_type"] in {"subsidy", "loan", "guarantee", "equity"}
        assert g["region_ids"] and all(x in ids["regions"] for x in g["region_ids"]), g["slug"]
        for field, target in (("grant_area_ids", "grant_areas"), ("target_group_ids", "target_groups"),
                              ("eligible_entity_ids", "eligible_entities")):
            vals = g.get(field, [])
            assert len(vals) == len(set(vals)), (g["slug"], field)
            assert all(x in ids[target] for x in vals), (g["slug"], field)
        if "grant_provider_id" in g:
            assert g["grant_provider_id"] in ids["grant_providers"], g["slug"]
        for field in ("application_links", "guideline_links"):
            for u in g.get(field, []):
                assert u.startswith(("http://", "https://")), (g["slug"], u)
        assert isinstance(g["ongoing_grant"], bool)


# --------------------------------------------------------------------------- main

def main() -> int:
    programmes = read_csv("fdb", "programmes.csv")
    regions, state_map = build_regions()
    areas, area_label_to_code = build_grant_areas()
    entities = build_entities()
    tgs, tg_label_to_code = build_target_groups()
    providers, provider_by_name = build_providers(programmes)
    grants, stats = build_grants(programmes, state_map, areas, area_label_to_code, tgs, tg_label_to_code,
                                 entities, providers, provider_by_name)
    files = {"regions": regions, "grant_areas": areas, "eligible_entities": entities, "target_groups": tgs,
             "grant_providers": providers, "grants": grants}
    validate(files)
    for name, rows in files.items():
        write_jsonl(f"{name}.jsonl", rows)
        print(f"{name}.jsonl: {len(rows)}")
    print("provider types:", dict(Counter(p["type"] for p in providers).most_common()))
    print("grants:", dict(sorted(stats.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
