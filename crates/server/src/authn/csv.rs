//! The CSV reading the token file needs: Go's `encoding/csv`, its errors worded
//! as Go words them.
//!
//! Hand-written on purpose, not the `csv` crate: kube-apiserver
//! (`token/tokenfile/tokenfile.go`, `NewCSV`) refuses to start on a token
//! file that Go's strict reader rejects (`LazyQuotes = false`), with Go's
//! `parse error on line L, column C: ...` message, while `csv_core::Reader`
//! "will never return an error and will always find *a* parse" (a stray or
//! unclosed quote becomes data) and also ends a record at a lone `\r`, which
//! Go keeps inside the field. A token file that kube refuses must not load
//! here with different tokens.

use std::fmt;

/// A syntax error in CSV input, worded like Go's `csv.ParseError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    pub start_line: usize,
    pub line: usize,
    pub column: usize,
    pub kind: CsvErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvErrorKind {
    /// `csv.ErrBareQuote`
    BareQuote,
    /// `csv.ErrQuote`
    Quote,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            CsvErrorKind::BareQuote => "bare \" in non-quoted-field",
            CsvErrorKind::Quote => "extraneous or missing \" in quoted-field",
        };
        if self.start_line != self.line {
            write!(f, "record on line {}; ", self.start_line)?;
        }
        write!(
            f,
            "parse error on line {}, column {}: {what}",
            self.line, self.column
        )
    }
}

impl std::error::Error for CsvError {}

/// Go's `encoding/csv.Reader` with `Comma = ','`, no comment character,
/// `LazyQuotes = false`, `TrimLeadingSpace = false`.
pub(super) struct CsvReader<'a> {
    input: &'a [u8],
    pos: usize,
    num_line: usize,
}

fn length_nl(b: &[u8]) -> usize {
    usize::from(b.last() == Some(&b'\n'))
}

impl<'a> CsvReader<'a> {
    pub(super) fn new(input: &'a [u8]) -> Self {
        CsvReader {
            input,
            pos: 0,
            num_line: 0,
        }
    }

    /// `readLine`: one line with its `\n`, `\r\n` folded to `\n`, a `\r`
    /// right before the end of input dropped. `None` at the end of input.
    fn read_line(&mut self) -> Option<Vec<u8>> {
        let rest = self.input.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (raw, at_eof) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..=i], false),
            None => (rest, true),
        };
        self.pos += raw.len();
        self.num_line += 1;
        let mut line = raw.to_vec();
        if at_eof && line.last() == Some(&b'\r') {
            line.pop();
        }
        let n = line.len();
        if n >= 2 && line[n - 2] == b'\r' && line[n - 1] == b'\n' {
            line[n - 2] = b'\n';
            line.truncate(n - 1);
        }
        Some(line)
    }

    /// `readRecord`: the next record, `None` at the end of input.
    pub(super) fn read_record(&mut self) -> Option<Result<Vec<String>, CsvError>> {
        let mut line = loop {
            let line = self.read_line()?;
            if line.len() == length_nl(&line) {
                continue; // empty line
            }
            break line;
        };
        let start_line = self.num_line;
        let mut fields: Vec<Vec<u8>> = Vec::new();
        let mut p = 0usize; // offset into `line`
        let mut col = 1usize;
        let mut pos_line = self.num_line;
        'field: loop {
            if line.get(p) != Some(&b'"') {
                // Non-quoted field.
                let rest = &line[p..];
                let comma = rest.iter().position(|&b| b == b',');
                let field = match comma {
                    Some(i) => &rest[..i],
                    None => &rest[..rest.len() - length_nl(rest)],
                };
                if let Some(j) = field.iter().position(|&b| b == b'"') {
                    return Some(Err(CsvError {
                        start_line,
                        line: self.num_line,
                        column: col + j,
                        kind: CsvErrorKind::BareQuote,
                    }));
                }
                fields.push(field.to_vec());
                match comma {
                    Some(i) => {
                        p += i + 1;
                        col += i + 1;
                        continue 'field;
                    }
                    None => break 'field,
                }
            }
            // Quoted field.
            let mut buf = Vec::new();
            p += 1;
            col += 1;
            loop {
                let rest = &line[p..];
                if let Some(i) = rest.iter().position(|&b| b == b'"') {
                    buf.extend_from_slice(&rest[..i]);
                    p += i + 1;
                    col += i + 1;
                    let rest = &line[p..];
                    match rest.first() {
                        Some(b'"') => {
                            // `""`: an escaped quote.
                            buf.push(b'"');
                            p += 1;
                            col += 1;
                        }
                        Some(b',') => {
                            p += 1;
                            col += 1;
                            fields.push(buf);
                            continue 'field;
                        }
                        _ if rest.len() == length_nl(rest) => {
                            fields.push(buf);
                            break 'field;
                        }
                        _ => {
                            return Some(Err(CsvError {
                                start_line,
                                line: self.num_line,
                                column: col - 1,
                                kind: CsvErrorKind::Quote,
                            }));
                        }
                    }
                } else if !rest.is_empty() {
                    // The field goes on on the next line.
                    buf.extend_from_slice(rest);
                    col += rest.len();
                    line = self.read_line().unwrap_or_default();
                    p = 0;
                    if !line.is_empty() {
                        pos_line += 1;
                        col = 1;
                    }
                } else {
                    // End of input inside quotes.
                    return Some(Err(CsvError {
                        start_line,
                        line: pos_line,
                        column: col,
                        kind: CsvErrorKind::Quote,
                    }));
                }
            }
        }
        Some(Ok(fields
            .into_iter()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .collect()))
    }
}
