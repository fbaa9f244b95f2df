// Package transcripts is the clone's capture of what agents did: every
// hook payload worth keeping (each prompt, each tool call with its whole
// input and output) in an append-only global log and in the log of the
// task it belongs to, and copies of the session and agent transcripts. It
// is the raw material of the retrospective. The store is per-clone state
// under .git/ideate/transcripts/ — outside the tracked tree, so it never
// rides a commit or a merge — and nothing in it is compacted on its own:
// Prune is the manual cut, Usage the size report.
//
// It is host-neutral: package hooks decides which payloads are captured,
// for which task, and which transcript file is copied where.
//
// # Layout
//
//	global.jsonl                     every captured event, one JSON object a line
//	sessions/<session>.jsonl         the copy of a session's transcript
//	sessions/<session>.<name>.jsonl  a transcript of that session bound to no task (a subagent's)
//	tasks/<task>/events.jsonl        the task's events (also in global.jsonl)
//	tasks/<task>/<name>.jsonl        transcripts of the task's agents
//	*.jsonl.offset                   how far into its source a copy has read
//
// A task id "S1-01/T1" is the directory tasks/S1-01/T1; every path
// component is checked (letters, digits, '.', '_', '-'; no "..").
//
// # Secrets
//
// Everything written passes the secret gate first. An event's payload and
// every complete line of a copied transcript are decoded as JSON and every
// string in them (keys too) is scanned; a line with a finding is written
// re-encoded with the markers, a clean line byte for byte as it came. A
// line that is not JSON is scanned as text. A line longer than LineBuffer
// is streamed in pieces cut where no token can continue (spaces, quotes,
// brackets, commas), each scanned as text, so memory stays bounded by
// the buffer whatever the transcript's size.
//
// # Concurrency
//
// Each append is one write(2) of whole lines under an exclusive flock on
// the file; a writer that finds the file replaced (Prune cut it) after
// taking the lock reopens it. A copy holds the flock of its destination
// while it reads its source from the stored offset to the last complete
// line, then stores the new offset: two hooks copying one transcript take
// turns and neither duplicates the other's lines. A copy killed between
// its write and its offset repeats those lines on the next run (never
// loses any).
//
// # Stage-in
//
// Stage copies a task's slice (its files, offsets aside) read-only into a
// worktree's .transcripts/ directory (files 0444, directory 0555), with a
// .gitignore of "*" inside so git never sees it; Unstage removes it. The
// global log and other tasks' slices are never staged.
package transcripts
