package record

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// NotesRef is where a commit's records are noted on the commit
// (gitstore.NotesRef, which sync shares).
const NotesRef = gitstore.NotesRef

// NoteLine is the line a commit's note gains for each record about it.
func NoteLine(id, kind string) string { return "ideate-record: " + id + " " + kind }

// notesCommitBoundary reports whether a note already names a
// commit-boundary record.
func notesCommitBoundary(note string) bool {
	for _, line := range strings.Split(note, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "ideate-record: ") && strings.HasSuffix(line, " commit-boundary") {
			return true
		}
	}
	return false
}

// Limits of a commit-boundary record.
const (
	MaxCommand    = 240 // characters of the command kept
	maxSubject    = 160 // characters of the commit's subject kept
	notePaths     = 8   // changed paths named in the content
	scopeDirs     = 6   // directories of changed paths in the scope
	maxDiffPaths  = 200 // changed paths read at most (a huge commit is not walked whole)
	maxSessionTag = 80  // characters of the session id named in the claim
)

// CommitBoundaryInput names a commit that just landed and how it was made.
type CommitBoundaryInput struct {
	Commit    string // the commit as its maker named it (a hash or an abbreviation); "" for HEAD
	Command   string // the command line that made it
	SessionID string // the session that ran it, "" when unknown
}

// CommitBoundaryResult is what CommitBoundary did.
type CommitBoundaryResult struct {
	Commit gitstore.Hash
	// Record is the commit-boundary record written; nil when the
	// commit's note already named one, and nothing was written.
	Record *Record
	// PathsErr is why the changed paths could not be read (the record
	// then says they are unknown); nil when they were.
	PathsErr error
}

// CommitBoundary records a commit that landed: a commit-boundary record
// (the commit's subject, the command, the changed paths against its first
// parent, their directories as the scope), then a NoteLine naming it on
// the commit's note on NotesRef. A commit whose note already names a
// commit-boundary record is not recorded again. An unknown commit is an
// error and writes nothing; a note that cannot be written after the
// record was is an error that names the record.
func (s *Store) CommitBoundary(ctx context.Context, in CommitBoundaryInput) (*CommitBoundaryResult, error) {
	g := s.git
	spec := strings.TrimSpace(in.Commit)
	if spec == "" {
		spec = "HEAD"
	}
	h, err := g.ResolveCommit(ctx, spec)
	if err != nil {
		msg, _ := secretgate.Scan(apperr.Message(err)) // it may quote spec
		return nil, apperr.Wrap(apperr.CodeOf(err), err, "cannot find the commit (%s): %s; nothing recorded", shown(spec), msg)
	}
	res := &CommitBoundaryResult{Commit: h}
	if note, ok, err := g.ReadNote(NotesRef, h); err == nil && ok && notesCommitBoundary(string(note)) {
		return res, nil
	}
	commit, err := g.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	parent := gitstore.ZeroHash
	if len(commit.Parents) > 0 {
		parent = commit.Parents[0]
	}
	paths, more, err := g.ChangedPaths(parent, h, maxDiffPaths)
	res.PathsErr = err
	subject, _, _ := strings.Cut(strings.TrimSpace(commit.Message), "\n")
	subject = textfmt.Fit(textfmt.OneLine(subject), maxSubject)
	if subject == "" {
		subject = "(no subject)"
	}
	session := textfmt.Fit(textfmt.OneLine(in.SessionID), maxSessionTag)
	if session == "" {
		session = "(unknown session)"
	}
	var dirs []string
	seen := map[string]bool{}
	for _, f := range paths {
		if d := path.Dir(f); !seen[d] && len(dirs) < scopeDirs {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\n", textfmt.Fit(strings.TrimSpace(in.Command), MaxCommand))
	switch {
	case len(paths) == 0 && err == nil:
		b.WriteString("Changed paths: none.")
	case len(paths) == 0:
		b.WriteString("Changed paths: unknown (they could not be read).")
	default:
		count := fmt.Sprint(len(paths))
		if more {
			count += "+"
		}
		shown := paths
		if len(shown) > notePaths {
			shown = shown[:notePaths]
		}
		fmt.Fprintf(&b, "Changed paths (%s): %s", count, strings.Join(shown, ", "))
		if n := len(paths) - len(shown); n > 0 || more {
			if more {
				b.WriteString(", and more.")
			} else {
				fmt.Fprintf(&b, ", and %d more.", n)
			}
		} else {
			b.WriteString(".")
		}
	}
	ar, err := s.Append(ctx, AppendInput{
		Kind:               "commit-boundary",
		Claim:              fmt.Sprintf("Git commit %s landed in session %s: %s", h.String()[:12], session, subject),
		VerificationAnchor: h.String(),
		Scope:              strings.Join(dirs, ", "),
		Source:             Source{CapturePoint: "commit-boundary", SessionID: in.SessionID},
		Content:            b.String(),
	})
	if err != nil {
		return nil, err
	}
	res.Record = ar.Record
	if _, err := g.AppendNote(ctx, NotesRef, h, NoteLine(ar.Record.ID, ar.Record.Kind)); err != nil {
		return res, apperr.Wrap(apperr.CodeOf(err), err, "record %s was written but the note on %s was not: %s",
			ar.Record.ID, h.String()[:12], apperr.Message(err))
	}
	return res, nil
}
