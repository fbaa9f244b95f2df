// Package shellwords reads a shell command line the way a POSIX shell
// splits it, far enough to tell which programs the line runs and with
// which words: the commit hook uses it to spot `git commit`, and a gate can
// use it to see what a command would run before it runs.
//
// # What it reads
//
// Words are separated by blanks; single quotes, double quotes (with their
// backslash escapes) and backslashes are removed the way the shell removes
// them; a backslash-newline joins lines; an unquoted # starts a comment.
// Simple commands are separated by ;, &, &&, |, ||, newlines and
// parentheses. Redirections stay in the words (`2>&1` splits at the &).
// Commands also gives each command its parenthesis depth, so a reader can
// tell where a `cd` inside a subshell stops applying.
//
// # What it does not read
//
// Expansions are left as written ($VAR, $(…), `…`, globs, ~), and the
// text of a command substitution, a here-document or `sh -c '…'` is not
// looked into. Split never fails: an unterminated quote runs to the end
// of the line. It is a leaf: it imports nothing of ours.
package shellwords
