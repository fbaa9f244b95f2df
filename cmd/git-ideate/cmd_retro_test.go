package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// git ideate retro over a real execution log: the failure before the last
// plan PASS is left out by default, the two after it are one recurring
// pattern with both entries as evidence; --since all takes the whole
// trail; a bad --since is SCHEMA.
func TestRetroCmd_SinceLastPlanning(t *testing.T) {
	dir := gt.NewRepo(t)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := execlog.Open(g)
	var ids []string
	for i, e := range []execlog.Entry{
		{Task: "S1-01/T1", Phase: "green", Event: "verdict", Result: "FAIL", Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}},
		{Sprint: 2, Phase: "plan", Event: "verdict", Result: "PASS"},
		{Task: "S2-01/T1", Phase: "green", Event: "verdict", Result: "FAIL", Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}},
		{Task: "S2-02/T1", Phase: "green", Event: "verdict", Result: "FAIL", Reasons: []execlog.Reason{{Class: "out_of_scope", Detail: "d", Paths: []string{"cmd/main.go"}}}},
	} {
		got, err := log.Append(t.Context(), e)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		ids = append(ids, got.ID)
	}
	g.Close()
	r := cli(t, dir, "", "retro")
	if r.code != 0 || !strings.Contains(r.out, "since the last planning") || !strings.Contains(r.out, "recurring (seen at least twice): 1\n") ||
		!strings.Contains(r.out, "   2  fail green out_of_scope cmd/main.go\n      tasks: S2-01/T1 S2-02/T1\n      evidence: exec:"+ids[2]+" exec:"+ids[3]+"\n") {
		t.Fatalf("retro: %+v", r)
	}
	r = cli(t, dir, "", "retro", "--since", "all", "--json")
	var out retroOut
	if r.code != 0 || json.Unmarshal([]byte(r.out), &out) != nil || out.MessageType != "retro" || len(out.Recurring) != 1 || out.Recurring[0].Count != 3 {
		t.Fatalf("retro --since all: %+v", r)
	}
	if r = cli(t, dir, "", "retro", "--since", "last-sprint"); r.code != 1 || !strings.Contains(r.err, "SCHEMA") {
		t.Fatalf("bad --since: %+v", r)
	}
}
