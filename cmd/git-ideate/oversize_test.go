package main

// An oversized input once was cut at 1,048,577 bytes (`--spec -`) and
// stored with exit 0. Every text input read from stdin, and every bounded field
// through MCP, is either stored whole or refused with a typed error that
// changes nothing.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
)

// refsState is every ref under refs/ideate/ with its value.
func refsState(t *testing.T, dir string) string {
	return gt.Git(t, dir, "for-each-ref", "refs/ideate/", "refs/notes/")
}

func TestStdinText_OverItsBound_RefusedWholeNothingWritten(t *testing.T) {
	fx := newLibFixture(t)
	id := fx.item(t)
	cases := []struct {
		name  string
		max   int
		args  []string
		field string // what the stored value is read back from
	}{
		{"work create --spec -", board.MaxSpec, []string{"work", "create", "--title", "t", "--spec", "-", "--spec-format", "text", "--human", "a"}, "spec"},
		{"work update-meta --spec -", board.MaxSpec, []string{"work", "update-meta", "--id", id, "--expected-version", "1", "--spec", "-"}, "spec"},
		{"record append --content -", record.MaxContent, []string{"record", "append", "--kind", "finding", "--claim", "c", "--content", "-"}, ""},
		{"record decision --rationale -", record.MaxContent, []string{"record", "decision", "--claim", "c", "--rationale", "-"}, ""},
		{"steering put --statement -", steering.MaxStatement, []string{"steering", "put", "--id", "GP-9", "--kind", "k", "--statement", "-"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := refsState(t, fx.dir)
			r := cli(t, fx.dir, strings.Repeat("a", c.max+4096), c.args...)
			if r.code == 0 || !strings.Contains(r.err, "SCHEMA") {
				t.Fatalf("%d bytes on stdin (bound %d): exit %d, stderr %q; want a SCHEMA refusal", c.max+4096, c.max, r.code, r.err)
			}
			if after := refsState(t, fx.dir); after != before {
				t.Fatalf("a refused input moved refs:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	// At the bound, a spec is stored whole.
	r := cli(t, fx.dir, strings.Repeat("b", board.MaxSpec), "work", "create", "--title", "t", "--spec", "-", "--spec-format", "text", "--human", "a")
	if r.code != 0 {
		t.Fatalf("a spec of exactly %d bytes: exit %d: %s", board.MaxSpec, r.code, r.err)
	}
	var it board.Item
	if err := json.Unmarshal([]byte(r.out), &it); err != nil {
		t.Fatal(err)
	}
	v, err := fx.board.Get(bg, it.ID)
	if err != nil || v == nil || len(v.Spec) != board.MaxSpec {
		t.Fatalf("stored spec: %v, %d bytes; want %d", err, len(v.Spec), board.MaxSpec)
	}
}

// TestMCPSpec_OverItsBound_Refused: the same bound through MCP, and
// through the library for update-meta.
func TestMCPSpec_OverItsBound_Refused(t *testing.T) {
	fx := newLibFixture(t)
	srv := mcpserver.New("test", func() (*mcpserver.Backend, error) { return backendFor(fx.env, "mcp-test") })
	before := refsState(t, fx.dir)
	raw, _ := json.Marshal(map[string]any{"title": "t", "spec": strings.Repeat("a", board.MaxSpec+1), "spec_format": "text", "actor_human": "a"})
	res := srv.Call(bg, "work_create", raw)
	text := res.Content[0].Text
	if !res.IsError || !strings.Contains(text, `"code":"SCHEMA"`) {
		t.Fatalf("work_create with a %d-byte spec: %.300s", board.MaxSpec+1, text)
	}
	if after := refsState(t, fx.dir); after != before {
		t.Fatalf("a refused spec moved refs")
	}
	id := fx.item(t)
	big := strings.Repeat("a", board.MaxSpec+1)
	if _, err := fx.board.UpdateMeta(bg, id, board.UpdateInput{ExpectedVersion: 1, Spec: &big}); err == nil || !strings.Contains(err.Error(), "SCHEMA") {
		t.Fatalf("UpdateMeta with a %d-byte spec: %v", len(big), err)
	}
}
