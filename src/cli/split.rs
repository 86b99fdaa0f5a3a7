//! Splitting input into statements and backslash commands, line by line.
//!
//! The REPL and piped stdin see input one line at a time, so the splitter is incremental: it
//! keeps the open statement and the quote/comment state between lines. It remembers the line
//! where each statement starts so script errors can point at it. DataFusion's parser is not
//! used here because it rejects a whole script for one bad statement, and the scripts must run
//! statement by statement up to the failing one.

/// One unit of input to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A SQL statement without its terminating `;`, and the 1-based line it starts on.
    Sql { text: String, line: usize },
    /// A backslash command line, e.g. `\d adult`.
    Command { text: String, line: usize },
}

impl Piece {
    pub(crate) fn text(&self) -> &str {
        match self {
            Piece::Sql { text, .. } | Piece::Command { text, .. } => text,
        }
    }

    pub(crate) fn line(&self) -> usize {
        match self {
            Piece::Sql { line, .. } | Piece::Command { line, .. } => *line,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Code,
    /// Inside '...'; `backslash` for E'...' strings, where `\'` does not end the string.
    Single {
        backslash: bool,
    },
    Double,
    /// Inside /* ... */ at this nesting depth (DataFusion's dialect nests block comments).
    Block(usize),
}

#[derive(Debug, Default)]
pub(crate) struct Splitter {
    buf: String,
    /// The line of the open statement's first significant character, if one is open.
    start: Option<usize>,
    state: State,
    line: usize,
}

impl Splitter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// No statement, quote or comment is open: the next line starts fresh.
    pub(crate) fn is_idle(&self) -> bool {
        self.start.is_none() && self.state == State::Code
    }

    /// Drop the open statement (Ctrl-C), keeping the line count.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.start = None;
        self.state = State::Code;
    }

    /// Feed one line (with or without its line ending); returns the pieces it completes.
    pub(crate) fn push_line(&mut self, line: &str) -> Vec<Piece> {
        self.line += 1;
        let line = line.trim_end_matches(['\n', '\r']);
        // As in psql, a backslash command runs even inside an open statement, which it leaves
        // open; inside a quote or a block comment the line is data.
        if self.state == State::Code && line.trim_start().starts_with('\\') {
            return vec![Piece::Command { text: line.trim().to_string(), line: self.line }];
        }
        let chars: Vec<char> = line.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            // How many characters this step consumes and keeps in the statement.
            let mut step = 1;
            match self.state {
                State::Code => match c {
                    ';' => {
                        if let Some(line) = self.start.take() {
                            out.push(Piece::Sql { text: self.buf.trim_end().to_string(), line });
                        }
                        self.buf.clear();
                        i += 1;
                        continue;
                    }
                    '-' if next == Some('-') => step = chars.len() - i,
                    '/' if next == Some('*') => {
                        self.state = State::Block(1);
                        step = 2;
                    }
                    '\'' => {
                        let prefix = i >= 1 && matches!(chars[i - 1], 'E' | 'e');
                        let alone = i < 2 || !is_ident(chars[i - 2]);
                        self.state = State::Single { backslash: prefix && alone };
                        self.begin();
                    }
                    '"' => {
                        self.state = State::Double;
                        self.begin();
                    }
                    c if c.is_whitespace() => {}
                    _ => self.begin(),
                },
                State::Single { backslash } => match c {
                    '\\' if backslash => step = 2,
                    '\'' if next == Some('\'') => step = 2,
                    '\'' => self.state = State::Code,
                    _ => {}
                },
                State::Double => match c {
                    '"' if next == Some('"') => step = 2,
                    '"' => self.state = State::Code,
                    _ => {}
                },
                State::Block(depth) => {
                    if c == '*' && next == Some('/') {
                        self.state = if depth == 1 { State::Code } else { State::Block(depth - 1) };
                        step = 2;
                    } else if c == '/' && next == Some('*') {
                        self.state = State::Block(depth + 1);
                        step = 2;
                    }
                }
            }
            let end = (i + step).min(chars.len());
            // Whitespace and comments before a statement are dropped, so its text and start
            // line point at the statement itself.
            if self.start.is_some() {
                self.buf.extend(&chars[i..end]);
            }
            i = end;
        }
        if self.start.is_some() {
            self.buf.push('\n');
        }
        out
    }

    /// End of input: the open statement, if any, even without its `;`.
    pub(crate) fn finish(&mut self) -> Option<Piece> {
        let piece = self.start.map(|line| Piece::Sql { text: self.buf.trim_end().to_string(), line });
        self.clear();
        piece
    }

    fn begin(&mut self) {
        if self.start.is_none() {
            self.start = Some(self.line);
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Split a whole script (a file or a `-c` argument).
pub(crate) fn split_script(text: &str) -> Vec<Piece> {
    let mut splitter = Splitter::new();
    let mut pieces: Vec<Piece> = text.lines().flat_map(|l| splitter.push_line(l)).collect();
    pieces.extend(splitter.finish());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str, line: usize) -> Piece {
        Piece::Sql { text: text.into(), line }
    }

    #[test]
    fn splits_on_semicolons() {
        assert_eq!(split_script("SELECT 1; SELECT 2;"), vec![sql("SELECT 1", 1), sql("SELECT 2", 1)]);
    }

    #[test]
    fn semicolons_in_quotes_do_not_split() {
        let s = "SELECT 'a;b', \"c;d\", 'it''s;' FROM t;";
        assert_eq!(split_script(s), vec![sql("SELECT 'a;b', \"c;d\", 'it''s;' FROM t", 1)]);
        assert_eq!(split_script(r"SELECT E'x\';y';"), vec![sql(r"SELECT E'x\';y'", 1)]);
        // Outside an E-string a backslash is an ordinary character.
        assert_eq!(split_script(r"SELECT 'x\'; SELECT 2;"), vec![sql(r"SELECT 'x\'", 1), sql("SELECT 2", 1)]);
    }

    #[test]
    fn comments_hide_semicolons() {
        let s = "-- a; b\nSELECT 1 -- c; d\n, 2 /* e; /* f; */ g; */ ;";
        assert_eq!(split_script(s), vec![sql("SELECT 1 -- c; d\n, 2 /* e; /* f; */ g; */", 2)]);
    }

    #[test]
    fn comment_only_input_is_nothing() {
        assert_eq!(split_script("-- nothing\n/* here;\n */\n;  ;"), vec![]);
    }

    #[test]
    fn multi_line_statements_keep_their_start_line() {
        let s = "\nSELECT\n  1 + 1\n  AS two;\n\n\nSELECT 'multi\nline;' AS s; SELECT\n3;";
        assert_eq!(
            split_script(s),
            vec![sql("SELECT\n  1 + 1\n  AS two", 2), sql("SELECT 'multi\nline;' AS s", 7), sql("SELECT\n3", 8)]
        );
    }

    #[test]
    fn trailing_statement_without_semicolon() {
        assert_eq!(split_script("SELECT 1;\nSELECT 2"), vec![sql("SELECT 1", 1), sql("SELECT 2", 2)]);
    }

    #[test]
    fn backslash_commands_run_inside_an_open_statement() {
        let s = "\\d\nSELECT\n\\d t\n1;\n  \\timing  \nSELECT 'a\n\\x\n' /*\n\\q\n*/;";
        assert_eq!(
            split_script(s),
            vec![
                Piece::Command { text: "\\d".into(), line: 1 },
                Piece::Command { text: "\\d t".into(), line: 3 },
                sql("SELECT\n1", 2),
                Piece::Command { text: "\\timing".into(), line: 5 },
                // Inside a quote or a block comment a backslash line is data.
                sql("SELECT 'a\n\\x\n' /*\n\\q\n*/", 6),
            ]
        );
    }

    #[test]
    fn incremental_state() {
        let mut sp = Splitter::new();
        assert!(sp.is_idle());
        assert_eq!(sp.push_line("SELECT 'a"), vec![]);
        assert!(!sp.is_idle());
        assert_eq!(sp.push_line("b'"), vec![]);
        assert_eq!(sp.push_line(";\n"), vec![sql("SELECT 'a\nb'", 1)]);
        assert!(sp.is_idle());
        sp.push_line("SELECT oops");
        sp.clear();
        assert!(sp.is_idle());
        assert_eq!(sp.push_line("SELECT 5;"), vec![sql("SELECT 5", 5)]);
    }
}
