package record_test

import (
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

// A staged record moves nothing until Publish; Publish lands the staged
// commit itself when the ref has not moved, and appends the record afresh
// with the same id and time when another append came between.
func TestStagePublish(t *testing.T) {
	s, dir := newStore(t)
	in := record.AppendInput{Kind: "finding", Claim: "staged", Content: "body"}
	st, err := s.Stage(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := gt.Git(t, dir, "for-each-ref", record.RefName); got != "" {
		t.Fatalf("Stage moved the record ref: %s", got)
	}
	res, err := s.Publish(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if tip := gt.Git(t, dir, "rev-parse", record.RefName); tip != res.Commit.String() {
		t.Fatalf("record ref %s, Publish says %s", tip, res.Commit)
	}
	first := res.Commit

	st, err = s.Stage(record.AppendInput{Kind: "finding", Claim: "overtaken", Content: "body"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), record.AppendInput{Kind: "note", Claim: "in between", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	res2, err := s.Publish(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if got := gt.Git(t, dir, "rev-list", "--count", record.RefName); got != "3" {
		t.Fatalf("%s commits on the record ref, want 3", got)
	}
	if parent := gt.Git(t, dir, "rev-parse", record.RefName+"^^"); parent != first.String() {
		t.Fatalf("history lost: %s^^ is %s, want %s", record.RefName, parent, first)
	}
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := sn.Get(res2.Record.ID)
	if err != nil {
		t.Fatalf("the overtaken record %s is not readable: %v", res2.Record.ID, err)
	}
	if r.Claim != "overtaken" || r.Source.Timestamp != res2.Record.Source.Timestamp {
		t.Fatalf("appended afresh as %+v", r)
	}
	gt.Fsck(t, dir)
}
