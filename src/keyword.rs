//! Keyword arguments and options (`objective=fewest`, `metric=lm`): one table of spellings
//! per keyword enum, read by one parser.

/// Each value of a keyword enum with the spellings it is accepted under, in lower case.
pub(crate) type Spellings<T> = [(T, &'static [&'static str])];

/// The value `s` spells, ignoring surrounding white space and ASCII case.
pub(crate) fn parse<T: Copy>(spellings: &Spellings<T>, s: &str) -> Option<T> {
    let s = s.trim();
    spellings.iter().find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(s))).map(|&(value, _)| value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn any_spelling_in_any_case_with_white_space() {
        let table: &super::Spellings<u8> = &[(1, &["one", "uno"]), (2, &["two"])];
        assert_eq!(super::parse(table, " UNO "), Some(1));
        assert_eq!(super::parse(table, "two"), Some(2));
        assert_eq!(super::parse(table, "three"), None);
    }
}
