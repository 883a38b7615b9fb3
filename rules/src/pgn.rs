//! PGN in the form pychess and Fairy-Stockfish use for variants: seven-tag roster plus
//! `[Variant "empire"]`, `[FEN "…"]` and `[SetUp "1"]` when the game does not start from the
//! variant's start position, and `[Termination "…"]`. Moves are written in UCI notation
//! (Fairy-Stockfish's: `e2e4`, `a7a8q`, `c8h3+`, `P@e4`, `0000`), which FSF reads back.
//!
//! One reader for every PGN vzero reads ([`PgnReader`]: arena files, `vzero rate`, openings,
//! books, imports, analysis): it streams any number of games from a `BufRead`, each with all its
//! tag pairs in file order, its moves with their lines, its result token and its first line.
//! Movetext: move numbers (`12.`, `12...`, also glued: `1.e2e4`), comments (`{…}`, `; …`),
//! `%` escape lines, NAGs (`$1`), `!`/`?` suffixes and variations (`(…)`, skipped), ended by a
//! result token (`1-0`, `0-1`, `1/2-1/2`, `*`). A malformed game is an error naming `file:line`
//! and reading resumes with the next game; [`parse_pgn`] and [`read_pgn_file`] are the strict
//! readers that stop there. Tag pairs (`[Name "value"]`, `\"` and `\\` escaped) are read and
//! written by one pair of functions.

use std::fmt::Write as _;
use std::path::Path;

/// A game's moves that do not replay: which ply (0: the `FEN` tag), as written, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}", if *.ply == 0 { .error.to_string() } else { format!("move {} ({}): {}", .ply, crate::echo(.text), .error) })]
pub struct PgnReplayError {
    /// The ply that does not replay (1 for the first move; 0: the `FEN` tag).
    pub ply: usize,
    /// The move (or FEN) as written.
    pub text: String,
    /// Why it does not replay.
    pub error: crate::Error,
}

/// One game as read from or written to PGN.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// Moves as written (UCI for files vzero writes).
    pub moves: Vec<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
}

/// A PGN reading error, naming where.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PgnError {
    /// The file (or the name the text was given).
    pub file: String,
    /// The line, from 1 (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl PgnGame {
    /// The value of tag `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Sets (or adds) tag `name`.
    pub fn set_tag(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(k, _)| k == name) {
            Some(t) => t.1 = value,
            None => self.tags.push((name.to_string(), value)),
        }
    }

    /// White's score: 1, ½, 0, or `None` for an unfinished game.
    pub fn white_score(&self) -> Option<f64> {
        match self.result.as_str() {
            "1-0" => Some(1.0),
            "0-1" => Some(0.0),
            "1/2-1/2" => Some(0.5),
            _ => None,
        }
    }

    /// Replays the moves (UCI) from the `FEN` tag or the variant's start position.
    pub fn replay(&self, variant: crate::Variant) -> Result<crate::Game, PgnReplayError> {
        let mut g = match self.tag("FEN") {
            Some(f) => crate::Game::from_fen(variant, f).map_err(|e| PgnReplayError { ply: 0, text: f.to_string(), error: e })?,
            None => crate::Game::startpos(variant),
        };
        for (i, m) in self.moves.iter().enumerate() {
            g.play_uci(m).map_err(|e| PgnReplayError { ply: i + 1, text: m.clone(), error: e })?;
        }
        Ok(g)
    }

    /// The game as PGN text (tags, a blank line, movetext wrapped at 80 columns, a blank line).
    /// `first_ply_black` numbers the moves from a position with Black to move; `fullmove` is the
    /// number of the first move. Sides are taken to alternate; [`PgnGame::to_pgn_from`] numbers
    /// double moves (a Dictator's) right.
    pub fn to_pgn(&self, fullmove: u32, first_ply_black: bool) -> String {
        let mut num = fullmove.max(1);
        let mut black = first_ply_black;
        let plies = self.moves.iter().map(|_| {
            let ply = (num, if black { crate::Color::Black } else { crate::Color::White });
            num += u32::from(black);
            black = !black;
            ply
        });
        self.write(plies.collect())
    }

    /// The game as PGN text, its moves numbered by replaying them from `start`: each ply gets
    /// the fullmove number and side to move of the position it is played in, so a side that
    /// moves twice (a Dictator's double move) keeps its number. From a move that does not
    /// replay on, sides are taken to alternate.
    pub fn to_pgn_from(&self, start: &crate::Position) -> String {
        self.write(turn_numbers(start, &self.moves))
    }

    /// Tags and movetext, with a move number before each turn: `n.` when White starts one,
    /// `n...` when the game starts with Black; a side's second move in a row gets none.
    fn write(&self, plies: Vec<(u32, crate::Color)>) -> String {
        let mut s = String::new();
        for (k, v) in &self.tags {
            let v = escape_tag_value(v);
            let _ = writeln!(s, "[{k} \"{v}\"]");
        }
        s.push('\n');
        let mut tokens = Vec::new();
        let mut last = None;
        for (m, &(num, side)) in self.moves.iter().zip(&plies) {
            tokens.extend(move_number(last, num, side));
            tokens.push(m.clone());
            last = Some(side);
        }
        tokens.push(self.result.clone());
        push_movetext(&mut s, tokens);
        s
    }
}

/// The fullmove number and side to move of the position each of `moves` (UCI) is played in,
/// replaying them from `start`, so a side that moves twice (a Dictator's double move) keeps its
/// number. From a move that does not replay on, sides are taken to alternate.
pub fn turn_numbers<M: AsRef<str>>(start: &crate::Position, moves: &[M]) -> Vec<(u32, crate::Color)> {
    let mut pos = *start;
    let mut replays = true;
    let mut plies: Vec<(u32, crate::Color)> = Vec::with_capacity(moves.len());
    for m in moves {
        let ply = match plies.last() {
            Some(&(n, c)) if !replays => (n + u32::from(c == crate::Color::Black), c.flip()),
            _ => (pos.fullmove_number().max(1), pos.side_to_move()),
        };
        plies.push(ply);
        replays = replays && pos.play_uci(m.as_ref()).is_ok();
    }
    plies
}

/// The move number written before a ply by `side` in turn `num` after a ply by `last`: `n.` when
/// White starts a turn, `n...` when the movetext starts with Black, none for Black after White or
/// for a side's second move in a row. The one numbering rule of every PGN vzero writes.
pub fn move_number(last: Option<crate::Color>, num: u32, side: crate::Color) -> Option<String> {
    match (last, side) {
        (None, crate::Color::Black) => Some(format!("{num}...")),
        (Some(crate::Color::White), crate::Color::White) | (_, crate::Color::Black) => None,
        (_, crate::Color::White) => Some(format!("{num}.")),
    }
}

/// Appends movetext tokens to `s`, separated by spaces and wrapped before column 80, then a
/// blank line.
pub fn push_movetext(s: &mut String, tokens: impl IntoIterator<Item = String>) {
    let mut line = String::new();
    for t in tokens {
        if !line.is_empty() && line.len() + 1 + t.len() > 79 {
            s.push_str(&line);
            s.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&t);
    }
    s.push_str(&line);
    s.push_str("\n\n");
}

fn is_result(t: &str) -> bool {
    matches!(t, "1-0" | "0-1" | "1/2-1/2" | "*")
}

/// A game as [`PgnReader`] reads it: the game, its first line and the line of each move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGameAt {
    /// Tags in file order, moves as written (without move numbers, NAGs and `!`/`?`), result.
    pub game: PgnGame,
    /// Line (from 1) of the game's first tag pair or movetext token.
    pub line: usize,
    /// Line of each move (as long as `game.moves`).
    pub move_lines: Vec<usize>,
}

/// The streaming PGN reader: one game at a time from a `BufRead`, with all its tag pairs in
/// file order, its moves with their lines, its result token and its first line.
///
/// A game with a syntax error (a malformed tag pair, `)` without `(`, a result token other than
/// the `Result` tag's, no result token before the next game's tags or the end of the input, an
/// unterminated comment or variation) comes as an error naming `file:line`, and reading resumes
/// with the next game: a lenient caller skips it, a strict one ([`parse_pgn`]) stops.
pub struct PgnReader<R> {
    input: R,
    file: String,
    /// Lines read so far: the number of the line in `buf`.
    line_no: usize,
    /// The current line without its line end; `buf[pos..]` is not read yet.
    buf: String,
    pos: usize,
    /// `buf[pos..]` begins a line or follows a result token: a tag pair or `%` escape may start.
    fresh: bool,
    eof: bool,
}

/// The game being read and the movetext state.
#[derive(Default)]
struct Partial {
    at: PgnGameAt,
    /// A tag pair or movetext token was seen.
    started: bool,
    /// A movetext token was seen: a tag pair now means the result token is missing.
    in_moves: bool,
    /// The game's first syntax error (line, message).
    error: Option<(usize, String)>,
    token: String,
    /// Line of the open `{` comment.
    comment: Option<usize>,
    var_depth: usize,
    /// Line of the outermost open `(`.
    var_line: usize,
}

impl Partial {
    fn start(&mut self, ln: usize) {
        if !self.started {
            self.started = true;
            self.at.line = ln;
        }
    }

    /// Reads the movetext `text` of line `ln` up to its end or a result token; the result
    /// token comes back with the offset just after it.
    fn scan(&mut self, text: &str, ln: usize) -> Option<(usize, String)> {
        for (i, c) in text.char_indices() {
            if self.comment.is_some() {
                if c == '}' {
                    self.comment = None;
                }
                continue;
            }
            if !(c.is_whitespace() || matches!(c, '{' | ';' | '(' | ')')) {
                if self.var_depth == 0 {
                    self.token.push(c);
                }
                continue;
            }
            if let Some(result) = self.flush(ln) {
                return Some((i, result));
            }
            match c {
                '{' => self.comment = Some(ln),
                ';' => return None,
                '(' => {
                    if self.var_depth == 0 {
                        self.var_line = ln;
                    }
                    self.var_depth += 1;
                }
                ')' if self.var_depth == 0 => {
                    self.error.get_or_insert((ln, "')' without '('".into()));
                }
                ')' => self.var_depth -= 1,
                _ => {}
            }
        }
        self.flush(ln).map(|r| (text.len(), r))
    }

    /// Consumes the movetext token read so far; returns it when it is a result token.
    fn flush(&mut self, ln: usize) -> Option<String> {
        if self.token.is_empty() {
            return None;
        }
        let t = std::mem::take(&mut self.token);
        self.start(ln);
        if is_result(&t) {
            return Some(t);
        }
        self.in_moves = true;
        if t.starts_with('$') {
            return None;
        }
        // move number: digits followed by dots, possibly glued to the move (1.e2e4, 12...e7e5),
        // or digits alone; `0000` is the null move
        let body: &str = match t.find('.') {
            Some(i) if i > 0 && t[..i].bytes().all(|b| b.is_ascii_digit()) => t[i..].trim_start_matches('.'),
            _ if t != "0000" && t.bytes().all(|b| b.is_ascii_digit()) => "",
            _ => &t,
        };
        let mv = body.trim_end_matches(['!', '?']);
        if !mv.is_empty() {
            self.at.game.moves.push(mv.to_string());
            self.at.move_lines.push(ln);
        }
        None
    }

    /// The game ended by `result` on line `ln`, or its first error.
    fn finish(mut self, result: String, ln: usize) -> Result<PgnGameAt, (usize, String)> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Some(t) = self.at.game.tag("Result") {
            if t != result && t != "*" {
                return Err((ln, format!("result token {result} differs from the Result tag {t}")));
            }
        }
        self.at.game.result = result;
        Ok(self.at)
    }

    /// What the end of the input (after line `last`) makes of the game: nothing, or an error.
    fn at_eof(self, last: usize) -> Option<(usize, String)> {
        if self.error.is_some() {
            self.error
        } else if let Some(l) = self.comment {
            Some((l, "unterminated '{' comment".into()))
        } else if self.var_depth > 0 {
            Some((self.var_line, "unterminated '(' variation".into()))
        } else if self.started {
            Some((last, format!("game starting on line {} has no result token (1-0, 0-1, 1/2-1/2 or *)", self.at.line)))
        } else {
            None
        }
    }
}

impl<R: std::io::BufRead> PgnReader<R> {
    /// A reader of `input`; `file` names it in errors.
    pub fn new(input: R, file: impl Into<String>) -> Self {
        PgnReader { input, file: file.into(), line_no: 0, buf: String::new(), pos: 0, fresh: true, eof: false }
    }

    /// The name given to [`PgnReader::new`].
    pub fn file(&self) -> &str {
        &self.file
    }

    fn error(&self, line: usize, message: String) -> PgnError {
        PgnError { file: self.file.clone(), line, message }
    }

    /// Reads the next line into `buf`; `false` at the end of the input.
    fn fill(&mut self) -> Result<bool, PgnError> {
        if self.eof {
            return Ok(false);
        }
        self.buf.clear();
        self.pos = 0;
        let n = match self.input.read_line(&mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.eof = true;
                return Err(self.error(self.line_no + 1, e.to_string()));
            }
        };
        if n == 0 {
            self.eof = true;
            return Ok(false);
        }
        self.line_no += 1;
        self.buf.truncate(self.buf.trim_end_matches(['\n', '\r']).len());
        if self.line_no == 1 && self.buf.starts_with('\u{feff}') {
            self.pos = '\u{feff}'.len_utf8();
        }
        self.fresh = true;
        Ok(true)
    }

    /// The next game: `Ok(None)` at the end of the input, `Ok(Some(Err(_)))` a game with a
    /// syntax error (reading goes on with the next game), `Err(_)` the input cannot be read
    /// (reading stops).
    pub fn next_game(&mut self) -> Result<Option<Result<PgnGameAt, PgnError>>, PgnError> {
        let mut p = Partial::default();
        loop {
            if self.pos >= self.buf.len() && !self.fill()? {
                return Ok(p.at_eof(self.line_no).map(|(line, message)| Err(self.error(line, message))));
            }
            let ln = self.line_no;
            let rest = &self.buf[self.pos..];
            if std::mem::take(&mut self.fresh) && p.comment.is_none() && p.var_depth == 0 {
                let trimmed = rest.trim();
                if trimmed.starts_with('[') {
                    if p.in_moves {
                        // This line starts the next game: leave it unread.
                        self.fresh = true;
                        let missing = format!("missing result token (1-0, 0-1, 1/2-1/2 or *) before the next game's tags on line {ln}");
                        let (line, message) = p.error.unwrap_or((p.at.line, missing));
                        return Ok(Some(Err(self.error(line, message))));
                    }
                    p.start(ln);
                    match parse_tag_pair(trimmed) {
                        Ok((name, value)) => p.at.game.tags.push((name.to_string(), value)),
                        Err(e) => {
                            p.error.get_or_insert((ln, e));
                        }
                    }
                    self.pos = self.buf.len();
                    continue;
                }
                if trimmed.starts_with('%') {
                    self.pos = self.buf.len();
                    continue;
                }
            }
            match p.scan(rest, ln) {
                None => self.pos = self.buf.len(),
                Some((end, result)) => {
                    self.pos += end;
                    self.fresh = true;
                    return Ok(Some(p.finish(result, ln).map_err(|(line, message)| self.error(line, message))));
                }
            }
        }
    }
}

/// Every game of `reader`, stopping at the first error.
fn read_all<R: std::io::BufRead>(mut reader: PgnReader<R>) -> Result<Vec<PgnGame>, PgnError> {
    let mut games = Vec::new();
    while let Some(g) = reader.next_game()? {
        games.push(g?.game);
    }
    Ok(games)
}

/// Parses PGN text, strictly: the first malformed game is the error; `file` names the source.
pub fn parse_pgn(text: &str, file: &str) -> Result<Vec<PgnGame>, PgnError> {
    read_all(PgnReader::new(text.as_bytes(), file))
}

/// Reads every game of a PGN file, strictly (an unreadable file is an error on its line 0).
pub fn read_pgn_file(path: &Path) -> Result<Vec<PgnGame>, PgnError> {
    let file = path.display().to_string();
    let input = std::fs::File::open(path).map_err(|e| PgnError { file: file.clone(), line: 0, message: e.to_string() })?;
    read_all(PgnReader::new(std::io::BufReader::new(input), file))
}

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

    /// Every game of `text`, leniently: errors as `line: message`.
    fn lenient(text: &str) -> Vec<Result<PgnGameAt, String>> {
        let mut r = PgnReader::new(text.as_bytes(), "x.pgn");
        let mut out = Vec::new();
        while let Some(g) = r.next_game().unwrap() {
            out.push(g.map_err(|e| {
                assert_eq!(e.file, "x.pgn");
                format!("{}: {}", e.line, e.message)
            }));
        }
        assert!(r.next_game().unwrap().is_none(), "the end stays the end");
        out
    }

    fn ok(g: &Result<PgnGameAt, String>) -> &PgnGameAt {
        g.as_ref().unwrap_or_else(|e| panic!("{e}"))
    }

    fn sample(i: usize) -> PgnGame {
        let result = ["1-0", "0-1", "1/2-1/2", "*"][i % 4];
        let mut g = PgnGame::default();
        g.set_tag("Event", format!("match \"{i}\" with a \\ backslash"));
        g.set_tag("Site", "[brackets] {braces} (parens) ; semicolon % 1-0");
        g.set_tag("White", format!("gen-{i:06}"));
        g.set_tag("Black", if i.is_multiple_of(3) { String::new() } else { "\\\"".to_string() });
        g.set_tag("Result", result);
        g.moves = (0..i % 60).map(|k| ["e2e4", "e7e5", "a7a8q", "P@e4", "c8h3+", "0000"][k % 6].to_string()).collect();
        g.result = result.to_string();
        g
    }

    /// A spqr game with Dictator double moves: written from its start, each turn carries the
    /// fullmove number of its position and a side's second move in a row none, and the game
    /// reads back move for move.
    #[test]
    fn double_moves_keep_their_turn_number() {
        use rand::{seq::SliceRandom, SeedableRng};
        let variant = crate::Variant::builtin("spqr").unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (game, turns) = (0..200)
            .find_map(|_| {
                // two bare Dictator kings: nearly every turn is a double move (or a pass)
                let mut g = crate::Game::from_fen(variant, "5k6/12/12/12/12/12/12/12/12/12/12/6K5 w - - 0 7 Kk").unwrap();
                let mut doubles = 0;
                while g.moves().len() < 400 && !g.result().is_over() {
                    let before = g.position().side_to_move();
                    let moves = g.position().legal_moves();
                    g.play(*moves.choose(&mut rng).unwrap());
                    doubles += usize::from(!g.result().is_over() && g.position().side_to_move() == before);
                }
                (doubles >= 3).then_some((g, doubles))
            })
            .expect("random spqr games with double moves");
        let mut p = PgnGame::default();
        p.set_tag("Variant", "spqr");
        p.set_tag("FEN", game.start().fen());
        p.moves = game.uci_moves();
        p.result = "*".into();
        let text = p.to_pgn_from(game.start());
        let read = parse_pgn(&text, "t.pgn").unwrap();
        assert_eq!(read[0].moves, p.moves);
        // the numbers written are the White turns' fullmove numbers, in order
        let mut want = Vec::new();
        let mut pos = *game.start();
        let mut last = None;
        for &m in game.moves() {
            let side = pos.side_to_move();
            if side == crate::Color::White && last != Some(side) {
                want.push(format!("{}.", pos.fullmove_number()));
            }
            last = Some(side);
            pos.play(m);
        }
        let got: Vec<&str> = text.split_whitespace().filter(|t| t.ends_with('.') && t.starts_with(|c: char| c.is_ascii_digit())).collect();
        assert_eq!(got, want, "{turns} double moves");
        // numbered as if sides alternated, the same game drifts by a move per double move
        assert_ne!(p.to_pgn(7, false), text);
    }

    #[test]
    fn written_games_read_back_with_their_lines() {
        let mut text = String::new();
        let mut starts = Vec::new();
        let games: Vec<PgnGame> = (0..300).map(sample).collect();
        for (i, g) in games.iter().enumerate() {
            starts.push(text.lines().count() + 1);
            text.push_str(&g.to_pgn(1 + i as u32 % 3, i % 2 == 1));
        }
        let read = lenient(&text);
        assert_eq!(read.len(), games.len());
        let lines: Vec<&str> = text.lines().collect();
        for ((r, g), start) in read.iter().zip(&games).zip(&starts) {
            let r = ok(r);
            assert_eq!((&r.game, r.line), (g, *start));
            assert_eq!(r.move_lines.len(), g.moves.len());
            for (m, &l) in g.moves.iter().zip(&r.move_lines) {
                assert!(lines[l - 1].split_whitespace().any(|t| t == m), "{m} not on line {l}: {}", lines[l - 1]);
            }
        }
        assert_eq!(parse_pgn(&text, "x.pgn").unwrap(), games);
        let dir = std::env::temp_dir().join(format!("vzero-rules-pgn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.pgn");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_pgn_file(&path).unwrap(), games);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const MOVETEXT: &str = "\u{feff}[White \"a\"]
[Result \"0-1\"]
% an escape line
1.e2e4 {a comment
[Event \"not a tag\"] 1-0 (over lines} e7e5!? $14 (1... d7d5 (1... c7c5 {x)} 2. g1f3) 2. d2d4)
2. g1f3? ; 1-0 rest of the line
2...b8c6 3. 0-1 * 4. a2a3
(4. b2b3) 1-0
";

    fn check_movetext(text: &str) {
        let read = lenient(text);
        assert_eq!(read.len(), 3, "{read:?}");
        let g = ok(&read[0]);
        assert_eq!(g.game.tags, [("White".to_string(), "a".to_string()), ("Result".to_string(), "0-1".to_string())]);
        assert_eq!(g.game.moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
        assert_eq!((g.line, g.move_lines.as_slice(), g.game.result.as_str()), (1, &[4, 5, 6, 7][..], "0-1"));
        // a result token mid-line: the rest of the line is the next games
        let g = ok(&read[1]);
        assert_eq!((g.line, g.game.tags.len(), g.game.moves.len(), g.game.result.as_str()), (7, 0, 0, "*"));
        let g = ok(&read[2]);
        assert_eq!((g.line, g.game.moves.as_slice(), g.move_lines.as_slice(), g.game.result.as_str()), (7, &["a2a3".to_string()][..], &[7][..], "1-0"));
    }

    #[test]
    fn comments_nags_variations_and_move_numbers_are_not_moves() {
        check_movetext(MOVETEXT);
    }

    #[test]
    fn crlf_reads_as_lf() {
        check_movetext(&MOVETEXT.replace('\n', "\r\n"));
        assert_eq!(parse_pgn(&MOVETEXT.replace('\n', "\r\n"), "x.pgn").unwrap(), parse_pgn(MOVETEXT, "x.pgn").unwrap());
    }

    const BROKEN: &str = "[Event \"good\"]
1. e2e4 1-0

[Event \"bad tag\"]
[Black b]
1. e2e4 0-1
[Event \"no result\"]
1. e2e4 e7e5
[Event \"paren\"]
1. e2e4 ) e7e5 *
[Event \"mismatch\"]
[Result \"1-0\"]
1. e2e4
0-1
[Event \"last\"]
1. d2d4 1/2-1/2
";

    #[test]
    fn a_malformed_game_is_an_error_at_its_line_and_reading_resumes() {
        let read = lenient(BROKEN);
        let errors: Vec<&str> = read.iter().filter_map(|g| g.as_ref().err().map(String::as_str)).collect();
        assert_eq!(
            errors,
            [
                "5: tag Black: value must be in double quotes",
                "7: missing result token (1-0, 0-1, 1/2-1/2 or *) before the next game's tags on line 9",
                "10: ')' without '('",
                "14: result token 0-1 differs from the Result tag 1-0",
            ]
        );
        assert_eq!(read.len(), 6);
        assert_eq!((ok(&read[0]).line, ok(&read[0]).game.tag("Event")), (1, Some("good")));
        let last = ok(&read[5]);
        assert_eq!((last.line, last.game.tag("Event"), last.game.moves.as_slice()), (15, Some("last"), &["d2d4".to_string()][..]));
        // the strict reader stops at the first
        assert_eq!(parse_pgn(BROKEN, "x.pgn").unwrap_err().to_string(), "x.pgn:5: tag Black: value must be in double quotes");
    }

    #[test]
    fn the_end_of_the_input_ends_an_unfinished_game_with_an_error() {
        assert_eq!(lenient("[White \"a\"]\n\n1. e2e4 e7e5\n"), [Err("3: game starting on line 1 has no result token (1-0, 0-1, 1/2-1/2 or *)".to_string())]);
        assert_eq!(lenient("1. e2e4 *\n\n1. d2d4"), [Ok(PgnGameAt { game: PgnGame { moves: vec!["e2e4".into()], result: "*".into(), ..Default::default() }, line: 1, move_lines: vec![1] }), Err("3: game starting on line 3 has no result token (1-0, 0-1, 1/2-1/2 or *)".to_string())]);
        assert_eq!(lenient("1. e2e4 {oops\n1-0\n"), [Err("1: unterminated '{' comment".to_string())]);
        assert_eq!(lenient("[A \"1\"]\n1. e2e4\n(1. d2d4 (1. c2c4) 1-0\n"), [Err("3: unterminated '(' variation".to_string())]);
        assert_eq!(lenient("\n{ a comment, no game }\n\n"), []);
        let e = parse_pgn("[White \"a\"]\n\n1. e2e4 e7e5\n", "bad.pgn").unwrap_err().to_string();
        assert_eq!(e, "bad.pgn:3: game starting on line 1 has no result token (1-0, 0-1, 1/2-1/2 or *)");
    }

    #[test]
    fn unreadable_input_stops_the_reader() {
        let mut r = PgnReader::new(&b"[A \"x\"]\n1. e2e4 *\n\xff\xfe\n1. d2d4 *\n"[..], "x.pgn");
        assert_eq!(r.next_game().unwrap().unwrap().unwrap().game.moves, ["e2e4"]);
        let e = r.next_game().unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("x.pgn", 3));
        assert!(r.next_game().unwrap().is_none());
        let e = read_pgn_file(Path::new("/nonexistent/vzero.pgn")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/nonexistent/vzero.pgn", 0));
    }

    /// `games` copies of one game, generated as they are read (never the whole text at once).
    struct Games {
        game: &'static [u8],
        left: usize,
        at: usize,
    }

    impl std::io::Read for Games {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Ok(0);
            }
            let n = out.len().min(self.game.len() - self.at);
            out[..n].copy_from_slice(&self.game[self.at..self.at + n]);
            self.at += n;
            if self.at == self.game.len() {
                (self.at, self.left) = (0, self.left - 1);
            }
            Ok(n)
        }
    }

    #[test]
    fn a_large_input_streams() {
        const GAME: &str = "[Event \"big\"]\r\n[Result \"1-0\"]\r\n\r\n1. e2e4 e7e5 {c} 2. g1f3 1-0\r\n\r\n";
        let n = 200_000; // 13 MB
        let mut r = PgnReader::new(std::io::BufReader::new(Games { game: GAME.as_bytes(), left: n, at: 0 }), "big.pgn");
        let mut count = 0;
        while let Some(g) = r.next_game().unwrap() {
            let g = g.unwrap();
            assert_eq!((g.line, g.move_lines.as_slice()), (5 * count + 1, &[5 * count + 4; 3][..]));
            assert_eq!((g.game.moves.len(), g.game.result.as_str()), (3, "1-0"));
            count += 1;
        }
        assert_eq!(count, n);
    }
}

