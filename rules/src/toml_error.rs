//! One readable line for a TOML parse error (variant definitions, run configs): the line and
//! column where it points, that line's text, then the parser's message, without the parser's multi-line excerpt
//! and caret row (which a one-line error squeezes into noise).

/// `line L, column C (`the line`): message` for `err` found in `text`; just the message for a missing field
/// (the parser points at the whole table then, not at a place in the file).
pub fn describe_toml_error(text: &str, err: &toml::de::Error) -> String {
    let message = err.message().trim().replace('\n', " ");
    match err.span() {
        Some(span) if !message.starts_with("missing field") => {
            let at = span.start.min(text.len());
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let text_line = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line}, column {column} (`{}`): {message}", crate::echo(text_line))
        }
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Def {
        name: String,
        files: u32,
    }

    #[test]
    fn names_the_place_or_the_missing_field_in_one_line() {
        let text = "# a comment\nname = \"x\"\nfiles = \"eight\"\n";
        let e = toml::from_str::<Def>(text).unwrap_err();
        let d = describe_toml_error(text, &e);
        assert!(d.starts_with("line 3, column 9 (`files = \"eight\"`): "), "{d}");
        assert!(!d.contains('\n') && !d.contains('^'), "{d}");
        let text = "# files = 8 is missing\nname = \"x\"\n";
        let d = describe_toml_error(text, &toml::from_str::<Def>(text).unwrap_err());
        assert_eq!(d, "missing field `files`");
    }
}
