package gitstore

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
)

// What user input may become in a commit. git fsck --strict (and so a
// remote with receive.fsckObjects) rejects a commit with a NUL byte
// anywhere (nulInCommit), and an author or committer line whose name or
// email holds '<', '>' or a newline, whose name is empty, or whose date or
// zone is malformed. Free text therefore lives in blobs, verbatim; a
// commit message shows it only through MessageLine, and a name that may be
// shown there must pass CheckLabel. WriteCommit refuses whatever slipped
// past both.

// EscapeControls returns s with every control character (Unicode Cc: C0,
// DEL, C1) written as visible text: \xNN for C0 and DEL, \u00NN for C1.
func EscapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MessageLine renders free text for one line of a commit message (a
// subject, a trailer value): runs of white space become one space, the ends
// are trimmed, and every other control character is escaped (see
// EscapeControls). The result holds no NUL and no newline.
func MessageLine(s string) string {
	return EscapeControls(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
}

// CheckLabel refuses a name-like value (a record kind, an actor, a spec
// format, a tenant, a reference's rel…) that holds a control character:
// such values are shown in commit messages and note lines, one per line,
// and a newline or NUL there would forge a line or break git fsck. The
// error is apperr.Schema and names the field and the character, never the
// value (which may be a secret).
func CheckLabel(field, v string) error {
	for i, r := range v {
		if unicode.IsControl(r) {
			return apperr.New(apperr.Schema, "%s holds the control character U+%04X at byte %d; names must be printable text", field, r, i)
		}
	}
	return nil
}

// checkCommit refuses a commit git fsck --strict would reject. Inputs are
// made safe before they reach a commit; this is the last line.
func checkCommit(c *Commit) error {
	if strings.IndexByte(c.Message, 0) >= 0 {
		return apperr.New(apperr.Internal, "refusing to write a commit whose message holds a NUL byte (git fsck rejects it)")
	}
	for _, who := range []struct {
		role string
		sig  Signature
	}{{"author", c.Author}, {"committer", c.Committer}} {
		s := who.sig
		switch {
		case s.Name == "" || strings.ContainsAny(s.Name, "<>\n\x00"):
			return apperr.New(apperr.Internal, "refusing to write a commit whose %s name git fsck rejects", who.role)
		case strings.ContainsAny(s.Email, "<>\n\x00"):
			return apperr.New(apperr.Internal, "refusing to write a commit whose %s email git fsck rejects", who.role)
		case s.When.Unix() < 0:
			return apperr.New(apperr.Internal, "refusing to write a commit dated before 1970 (git fsck rejects it)")
		}
		if _, off := s.When.Zone(); off <= -100*3600 || off >= 100*3600 {
			return apperr.New(apperr.Internal, "refusing to write a commit whose %s time zone git fsck rejects", who.role)
		}
	}
	return nil
}
