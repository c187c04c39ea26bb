//! Static tokens: `token/tokenfile/tokenfile.go`.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::Path;

use super::csv::CsvReader;
use super::{AuthnError, TokenAuthenticator, TokenOutcome, UserInfo};

/// The `--token-auth-file` authenticator: CSV records
/// `token,user,uid[,"group1,group2"[,...]]`.
#[derive(Clone, Default)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tokens are secrets.
        f.debug_struct("TokenFile")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

impl TokenFile {
    /// Reads and parses a token file (`NewCSV`).
    pub fn load(path: &Path) -> Result<TokenFile, AuthnError> {
        let data = fs::read(path).map_err(|source| AuthnError::ReadTokenFile {
            path: path.to_path_buf(),
            source: std::sync::Arc::new(source),
        })?;
        TokenFile::parse(&path.display().to_string(), &data)
    }

    /// Parses token file contents; `path` only names the file in messages.
    ///
    /// As upstream (Go `encoding/csv` with variable field counts): blank
    /// lines are skipped, fields may be double-quoted (with `""` for a quote
    /// and line breaks inside), there are no comment lines, a record with
    /// fewer than 3 fields is an error, a record with an empty token is
    /// skipped with a warning, a repeated token wins over earlier ones with a
    /// warning, the 4th field is split on `,` into groups and further fields
    /// are ignored.
    pub fn parse(path: &str, data: &[u8]) -> Result<TokenFile, AuthnError> {
        let mut reader = CsvReader::new(data);
        let mut tokens = HashMap::new();
        let mut record_num = 0usize;
        while let Some(record) = reader.read_record() {
            let record = record.map_err(|error| AuthnError::TokenFileSyntax {
                path: path.to_string(),
                error,
            })?;
            if record.len() < 3 {
                return Err(AuthnError::TooFewColumns {
                    path: path.to_string(),
                    found: record.len(),
                });
            }
            record_num += 1;
            if record[0].is_empty() {
                tracing::warn!(
                    "empty token has been found in token file '{path}', record number '{record_num}'"
                );
                continue;
            }
            let groups = match record.get(3) {
                Some(g) => g.split(',').map(str::to_string).collect(),
                None => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups,
                extra: Default::default(),
            };
            if tokens.insert(record[0].clone(), user).is_some() {
                tracing::warn!(
                    "duplicate token has been found in token file '{path}', record number '{record_num}'"
                );
            }
        }
        Ok(TokenFile { tokens })
    }

    /// The user of `token`, if the file has it (`AuthenticateToken`).
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        self.tokens.get(token).cloned()
    }

    /// Number of tokens loaded.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// Audience agnostic: the chain decides which audiences it is valid for.
impl TokenAuthenticator for TokenFile {
    fn authenticate_token(&self, token: &str, _audiences: &[String]) -> TokenOutcome {
        match self.authenticate(token) {
            Some(user) => TokenOutcome::Authenticated {
                user,
                audiences: Vec::new(),
            },
            None => TokenOutcome::NotMine,
        }
    }
}
