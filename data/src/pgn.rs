//! The PGN tag-pair syntax shared by every PGN reader and writer of vzero (the arena's match
//! files and the opening statistics' game sources).

/// Parses one tag-pair line (`[Name "value"]`, already trimmed) into its name and unescaped
/// value (`\"` and `\\`). The error says what is wrong, for the caller to place (file, line).
pub fn parse_tag_pair(trimmed: &str) -> Result<(&str, String), String> {
    let inner = trimmed.strip_prefix('[').and_then(|x| x.strip_suffix(']'));
    let Some((name, rest)) = inner.and_then(|i| i.split_once(char::is_whitespace)) else {
        return Err(format!("malformed tag pair '{trimmed}'"));
    };
    let Some(value) = rest.trim().strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return Err(format!("tag {name}: value must be in double quotes"));
    };
    let mut v = String::with_capacity(value.len());
    let mut esc = false;
    for c in value.chars() {
        if esc {
            v.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else {
            v.push(c);
        }
    }
    Ok((name, v))
}

/// A tag value escaped for writing between double quotes (the inverse of [`parse_tag_pair`]).
pub fn escape_tag_value(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_values_round_trip() {
        for v in ["plain", "a \"quoted\" name", "back\\slash", "", "\\\"", "ends with \\"] {
            let line = format!("[Event \"{}\"]", escape_tag_value(v));
            assert_eq!(parse_tag_pair(&line), Ok(("Event", v.to_string())), "{line}");
        }
    }

    #[test]
    fn malformed_pairs_say_what_is_wrong() {
        assert_eq!(parse_tag_pair("[Event]"), Err("malformed tag pair '[Event]'".to_string()));
        assert_eq!(parse_tag_pair("[Event \"x\""), Err("malformed tag pair '[Event \"x\"'".to_string()));
        assert_eq!(parse_tag_pair("[Event x]"), Err("tag Event: value must be in double quotes".to_string()));
    }
}
