//! Programmes for municipal and social enterprises only, read from their title
//! ("Investitionskredit für Kommunale und Soziale Unternehmen …", "Partnerprogramm
//! „Kommunale und kommunalnahe Unternehmen“", "… für die Sozialwirtschaft"), and whether a
//! profile is such an organisation: non-profit, a municipality or a body it owns. A
//! loan for the social infrastructure of non-profit and municipal operators does not
//! serve a car-repair workshop, though both are companies.

use std::sync::OnceLock;

use regex::Regex;

use super::kind::Read;
use super::sector::re;
use crate::model::Grant;

/// True (with the title as evidence) when the title names municipal, municipally
/// related or social enterprises, non-profit operators or the social economy as those
/// it is for. `None` when it does not.
pub fn only_social_and_municipal(grant: &Grant) -> Option<Read<bool>> {
    static TITLE: OnceLock<Regex> = OnceLock::new();
    let title = TITLE.get_or_init(|| {
        re(concat!(
            r"\bkommunal(nah)?e[n]? (und (kommunalnah|sozial)e[n]? )?unternehmen",
            r"|\bsoziale[n]? unternehmen|\bsozialunternehmen|\bsozialwirtschaft",
            r"|\bgemeinnützige[n]? (unternehmen|organisationen|träger)",
        ))
    });
    title.is_match(&grant.title).then(|| Read {
        value: true,
        sentence: Some(grant.title.clone()),
    })
}

/// True when a profile's texts say the organisation is a municipal body or enterprise
/// (a utility, a municipally owned company, a special-purpose association) or a social
/// enterprise or charity; a profile that declares itself non-profit is one without
/// saying so (see [`crate::profile::ResolvedProfile::social_enterprise`]).
pub fn in_profile(text: &str) -> bool {
    static OWN: OnceLock<Regex> = OnceLock::new();
    let own = OWN.get_or_init(|| {
        re(concat!(
            r"stadtwerke|gemeindewerke|kommunale[sn]? (unternehmen|tochter|gesellschaft|betrieb)",
            r"|\beigenbetrieb|zweckverband|\banstalt des öffentlichen rechts|sozialunternehmen",
            r"|gemeinnützig|wohlfahrtsverband|\bdiakonie|\bcaritas",
            r"|municipal (utility|utilities|company|enterprise)|municipally owned|public utility",
            r"|social enterprise|\bcharit(y|able)\b|non-?profit",
        ))
    });
    own.is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::test_grant as grant;

    #[test]
    fn a_title_for_municipal_and_social_enterprises_restricts_the_programme_to_them() {
        for title in [
            "Investitionskredit für Kommunale und Soziale Unternehmen im Bereich der kommunalen und sozialen Infrastruktur – IKU",
            "Partnerprogramm „Kommunale und kommunalnahe Unternehmen“ der Saarländischen Investitionskreditbank",
            "Förderung im Rahmen des ESF-Bundesprogramms „rückenwind3 für Vielfalt, Wandel und Zukunft in der Sozialwirtschaft“",
            "Darlehen für gemeinnützige Organisationen",
        ] {
            let read = only_social_and_municipal(&grant(title, "Wenn Sie …", "loan"));
            assert_eq!(read.map(|r| r.sentence.is_some()), Some(true), "{title}");
        }
        // Programmes that only fund municipal or social topics, or name such enterprises
        // in the teaser among others, are not restricted to them.
        for (title, short) in [
            (
                "Investitionskredit Kommunen",
                "Wenn Sie als Kommune in die Infrastruktur investieren, können Sie ein Darlehen erhalten.",
            ),
            (
                "Förderung der Elektromobilität – E-Mobil Invest",
                "Wenn Sie als Unternehmen, auch als kommunales Unternehmen, Elektrofahrzeuge anschaffen, können Sie einen Zuschuss erhalten.",
            ),
            (
                "Soziale Innovationen in der Arbeitswelt",
                "Wenn Sie ein Unternehmen sind, können Sie einen Zuschuss erhalten.",
            ),
        ] {
            assert!(only_social_and_municipal(&grant(title, short, "subsidy")).is_none(), "{title}");
        }
    }

    #[test]
    fn a_profile_says_whether_it_is_a_municipal_or_social_enterprise() {
        for text in [
            "Die Stadtwerke Eberbach versorgen 15.000 Haushalte",
            "Der Wasser- und Abwasserzweckverband Aller-Leine betreibt zwei Kläranlagen",
            "Klinikum Nordfriesland, eine gemeinnützige GmbH",
            "a municipally owned housing company",
            "We are a social enterprise that employs people with disabilities",
        ] {
            assert!(in_profile(text), "{text}");
        }
        for text in [
            "Kfz-Technik Schmitt GmbH, eine freie Werkstatt mit neun Beschäftigten",
            "a software company for fleet analytics",
            "Wir liefern Software an kommunale Verwaltungen",
        ] {
            assert!(!in_profile(text), "{text}");
        }
    }
}
