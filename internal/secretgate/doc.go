// Package secretgate is the capture-time secret-scanning gate of git ideate.
//
// Every free-text field passes through [Scan] (or [Fields]) before anything
// is written. A match is redacted in place, never rejected: the matched
// secret is replaced by "[REDACTED:<rule-name>]" and the text around it is
// kept. There is no option to skip the scan.
//
// # Where it is used
//
//   - Record store: every text field – kind, claim, anchor, scope, every
//     source field, reference rel and id, and content. A record redaction
//     is reported (telemetry event "redactions", the process warning
//     IDEATE_RECORD_REDACTION naming the rule and count, never the content,
//     and the "redactions" array of the append result, which is the JSON
//     form of []Redaction: [{"pattern","count"}]).
//   - Board: title, event note, and reference rel/id (not spec or
//     spec_format). Silent: the masked value simply comes back.
//   - Steering: kind, domain, statement, and reference rel/id. Silent.
//
// # Rules
//
// Rules run in this order, each over the text left by the ones before it.
// "Kept" is the context that stays in the text; everything else of the
// match becomes the marker.
//
//	#   name                        matches                                                  kept
//	1   pem-private-key             a whole -----BEGIN … PRIVATE KEY----- …                  none
//	                                -----END … PRIVATE KEY----- block (also OPENSSH, EC,
//	                                ENCRYPTED, "PGP PRIVATE KEY BLOCK"), as ONE redaction;
//	                                a block without footer up to its last base64 line
//	2   aws-access-key-id           A3T[A-Z0-9] | AKIA AGPA AIDA AROA AIPA ANPA ANVA ASIA    none
//	                                ABIA ACCA, then 16 [A-Z0-9], on word boundaries
//	3   aws-secret-access-key       exactly 40 [A-Za-z0-9/+] after a key name starting       key name,
//	                                "aws"/"secret" (any case) and ":" "=" ":=" "=>"           separator,
//	                                                                                         quote
//	4   github-token                gh[pousr]_ + 36+ alnum; github_pat_ + 36+ [A-Za-z0-9_]   none
//	5   anthropic-api-key           sk-ant- + 20+ [A-Za-z0-9_-]                              none
//	6   openai-api-key              sk- (not sk-ant-) + 20+ [A-Za-z0-9_-]                    none
//	7   slack-token                 xox[baprs]- + 10+ [A-Za-z0-9-]                           none
//	8   jwt                         eyJ… . … . … (three base64url segments, 8+ chars each)   none
//	9   bearer-token                [Proxy-]Authorization ":"/"=" Bearer + 16+ token68      the header
//	10  connection-string-password  the password of scheme://user:password@                scheme, user,
//	                                                                                         "@host…"
//	    password-assignment         the value of a key ending in password/passwd (any case,   key, separator,
//	                                any prefix: DB_PASSWORD) after "=" ":" ":=" "=>"          quotes
//	    gitlab-token                glpat- + 20+ [A-Za-z0-9_-]                               none
//	    google-api-key              AIza + exactly 35 [A-Za-z0-9_-]                          none
//	    stripe-secret-key           sk_live_ rk_live_ sk_test_ rk_test_ + 24+ alnum          none
//	    npm-token                   npm_ + exactly 36 alnum                                  none
//	    slack-webhook-url           hooks.slack.com/{services,workflows,triggers}/ + path    the URL up to
//	                                                                                         the kind
//	11  high-entropy                a whole token of 32+ [A-Za-z0-9+=_-] with a lower-case   none
//	                                letter, an upper-case letter, a digit and Shannon
//	                                entropy >= 4.3 bits/char, not shaped like an identifier
//
// Rules 1–11 and their names are those of the reference implementation; the
// six unnumbered rules are additions for well-known token formats.
//
// To keep ordinary text untouched the gate is stricter than the bare
// patterns above in a few places, each documented at the rule:
//
//   - no match inside a longer word: "task-ant-…" and "disk-…" are no "sk-"
//     keys, "XAKIA…" is no key id;
//   - the body of an Anthropic, OpenAI or npm key and a Slack webhook path
//     must contain a lower-case letter, an upper-case letter and a digit (so
//     kebab-case names are not keys), a Slack token a digit;
//   - obvious stand-ins are left: "xxxxxxxx…", "YOUR_TOKEN_HERE", and, for
//     connection strings, "%s", "${DB_PASS}", "{password}", "<password>",
//     "****";
//   - the value of rule 3 must not be a hex digest (a git SHA-1 is 40 hex
//     characters) nor a path made of words;
//   - rule 11 tests whole tokens only (the bytes on both sides are outside
//     the alphabet, so "/" and "." split paths and URLs), skips identifier-
//     shaped tokens (camelCase/snake_case words averaging 2.5+ characters),
//     ignores id parts of a token (ULIDs, hex digests), and skips published
//     digests (go.sum "h1:…", subresource-integrity "sha512-…").
//
// Git SHA-1 and SHA-256 hashes (no upper case), ULIDs (26 characters, no
// lower case) and UUIDs (hex) cannot trip rule 11.
//
// # Idempotence
//
// Scan(Scan(x)) == Scan(x), and the second scan reports nothing. A marker
// contains "[", ":" and "]", which no rule accepts inside a secret (the
// connection-string password excludes "[" and "]" for exactly this reason),
// and the rule words in it are far below every length threshold. On top of
// that Scan repeats the whole rule list until a pass redacts nothing, so its
// result is a fixed point by construction.
//
// # Cost
//
// The rule table (17 regular expressions, no counted repetitions) is
// compiled once, on first use, in about 0.2 ms. Each prefixed rule runs its
// regular expression only where its literal prefix occurs ("-----BEGIN",
// "AKIA", "gh", "sk-", "xox", "eyJ", "authorization", "://", …); the
// prefixes are found with strings.IndexByte on their rarest byte, so text
// without them costs a few SIMD byte searches and no regexp work. The
// high-entropy rule is one pass over the bytes. A clean 300-character record
// scans in about 2 µs; 1 MB of mixed text in about 16 ms. Work is linear in
// the input, also for texts built to make a naive matcher quadratic.
package secretgate
