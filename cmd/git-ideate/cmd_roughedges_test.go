package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// createItem creates an item and returns its id.
func createItem(t *testing.T, dir, title string, extra ...string) string {
	t.Helper()
	r := mustOK(t, cli(t, dir, "", append([]string{"work", "create", "--title", title, "--spec", "s", "--spec-format", "text", "--human", "h"}, extra...)...))
	var it struct{ ID string }
	if err := json.Unmarshal([]byte(r.out), &it); err != nil {
		t.Fatal(err)
	}
	return it.ID
}

// Every verb takes --json; where the answer is one JSON line already, it
// asks for the indented form; sweep with --json answers in JSON.
func TestJSONOnEveryVerb(t *testing.T) {
	dir := gt.NewRepo(t)
	id := createItem(t, dir, "A", "--json")
	r := mustOK(t, cli(t, dir, "", "work", "claim", "--id", id, "--human", "h", "--json"))
	if !strings.Contains(r.out, "\n  \"id\"") {
		t.Fatalf("claim --json is not pretty: %q", r.out)
	}
	var it struct {
		Claim struct {
			ClaimToken int64 `json:"claim_token"`
		}
	}
	if err := json.Unmarshal([]byte(r.out), &it); err != nil {
		t.Fatal(err)
	}
	tok := strconv.FormatInt(it.Claim.ClaimToken, 10)
	for _, args := range [][]string{
		{"work", "renew", "--id", id, "--token", tok, "--json"},
		{"work", "update-meta", "--id", id, "--expected-version", "1", "--title", "A2", "--json"},
		{"work", "release", "--id", id, "--token", tok, "--json"},
		{"work", "cancel", "--id", id, "--human", "h", "--json"},
		{"record", "prime", "--json"},
		{"test", "classify", "--format", "go-test-json", "--json"},
	} {
		stdin := ""
		if args[0] == "test" {
			stdin = `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"pass","Package":"p","Test":"TestA"}` + "\n"
		}
		r := cli(t, dir, stdin, args...)
		if r.code != 0 || !json.Valid([]byte(r.out)) {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	r = runBin(t, dir, "", "work", "sweep", "--json")
	if r.code != 0 || r.err != "" || !json.Valid([]byte(r.out)) || !strings.Contains(r.out, `"reclaimed": 0`) {
		t.Fatalf("work sweep --json: %+v", r)
	}
	gt.Git(t, dir, "config", "ideate.steering", "true")
	r = mustOK(t, cli(t, dir, "", "steering", "put", "--id", "GP-1", "--kind", "k", "--statement", "s", "--json"))
	if !strings.Contains(r.out, "\n  \"ok\": true") {
		t.Fatalf("steering put --json: %q", r.out)
	}
}

// Bad values the help promises to refuse are refused with SCHEMA naming
// the range or the rule, and nothing is written.
func TestRefusedInputs(t *testing.T) {
	dir := gt.NewRepo(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"work", "list", "--limit", "0"}, "SCHEMA: --limit 0 is outside 1..500"},
		{[]string{"work", "list", "--limit", "100000", "--json"}, "SCHEMA: --limit 100000 is outside 1..500"},
		{[]string{"record", "read", "--limit", "0"}, "outside 1..500"},
		{[]string{"record", "read", "--limit", "-3", "--json"}, "outside 1..500"},
		{[]string{"record", "export", ""}, "SCHEMA: the destination directory must not be empty"},
		{[]string{"work", "ready", "--lease-ms", "1000"}, "SCHEMA: --lease-ms, --human and --agent apply only with --claim"},
	}
	for _, c := range cases {
		r := cli(t, dir, "", c.args...)
		if r.code == 0 || !strings.Contains(r.err, c.want) {
			t.Errorf("%q: want %q, got %+v", c.args, c.want, r)
		}
	}
	gt.Git(t, dir, "config", "ideate.steering", "true")
	r := cli(t, dir, "", "steering", "read", "--limit", "501")
	if r.code == 0 || !strings.Contains(r.err, "outside 1..500") {
		t.Errorf("steering read --limit 501: %+v", r)
	}
	if out := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); strings.TrimSpace(out) != "" {
		t.Fatalf("a refused call wrote: %s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 { // .git only
		t.Fatalf("a refused call left files: %v", entries)
	}
	help := cli(t, dir, "", "work", "list", "--help").out
	if !strings.Contains(help, "1..500") || !strings.Contains(help, "40,000 characters") {
		t.Fatalf("help names no limit range or page budget:\n%s", help)
	}
}

// A flag's value may start with "-" (a PEM block); a refused argument is
// never echoed unredacted.
func TestDashValueAndNoSecretEcho(t *testing.T) {
	dir := gt.NewRepo(t)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcGqnHxGAzkfpSG4G\n-----END RSA PRIVATE KEY-----"
	r := runBin(t, dir, "", "record", "decision", "--claim", "k", "--rationale", pem)
	if r.code != 0 || strings.Contains(r.err, "MIIEow") {
		t.Fatalf("--rationale PEM: %+v", r)
	}
	if strings.Contains(gt.Git(t, dir, "log", "-p", "refs/ideate/record"), "MIIEow") {
		t.Fatal("the key was stored")
	}
	r = runBin(t, dir, "", "record", "decision", "--claim", "k", "--rationale", "x", "ghp_abcdefghijklmnopqrstuvwxyz0123456789")
	if r.code == 0 || strings.Contains(r.err+r.out, "ghp_abcdef") {
		t.Fatalf("a refused secret argument was echoed: %+v", r)
	}
	r = runBin(t, dir, "", "record", "decision", "--claim", "k", "--rationale", "x", "--bogus=ghp_abcdefghijklmnopqrstuvwxyz0123456789")
	if r.code == 0 || strings.Contains(r.err+r.out, "ghp_abcdef") {
		t.Fatalf("a refused secret flag was echoed: %+v", r)
	}
	// A boolean flag before another flag still reads as two flags.
	mustOK(t, cli(t, dir, "", "record", "read", "--json", "--limit", "5"))
}

// Amending a steering item's status alone keeps its kind and statement;
// a new item still needs both; the listing says "superseded by".
func TestSteeringStatusAloneAndSupersededBy(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.steering", "true")
	mustOK(t, cli(t, dir, "", "steering", "put", "--id", "GP-1", "--kind", "guiding-principle", "--statement", "Keep state in git."))
	mustOK(t, cli(t, dir, "", "steering", "put", "--id", "GP-1", "--status", "deprecated"))
	r := mustOK(t, cli(t, dir, "", "steering", "read", "--id", "GP-1", "--json"))
	var page struct {
		Items []struct{ Kind, Statement, Status string }
	}
	if err := json.Unmarshal([]byte(r.out), &page); err != nil || len(page.Items) != 1 {
		t.Fatalf("%v %s", err, r.out)
	}
	if it := page.Items[0]; it.Kind != "guiding-principle" || it.Statement != "Keep state in git." || it.Status != "deprecated" {
		t.Fatalf("status-only amend: %+v", it)
	}
	r = cli(t, dir, "", "steering", "put", "--id", "GP-9", "--status", "active")
	if r.code == 0 || !strings.Contains(r.err, "SCHEMA: item GP-9 is new: it needs a kind and a statement") {
		t.Fatalf("new item without kind: %+v", r)
	}
	mustOK(t, cli(t, dir, "", "steering", "put", "--id", "GP-2", "--kind", "k", "--statement", "Newer.", "--supersedes", "GP-1"))
	out := mustOK(t, cli(t, dir, "", "steering", "read", "--id", "GP-1")).out
	if !strings.Contains(out, "superseded by GP-2") || strings.Contains(out, "supersedes by") {
		t.Fatalf("listing:\n%s", out)
	}
}

// An item whose dependency was cancelled says why it is blocked and how
// to unblock it, and the advice works.
func TestWorkListBlockedByCancelled(t *testing.T) {
	dir := gt.NewRepo(t)
	a := createItem(t, dir, "A")
	b := createItem(t, dir, "B", "--depends-on", a)
	out := mustOK(t, cli(t, dir, "", "work", "list")).out
	if !strings.Contains(out, "blocked: waits for "+a+" (open)") {
		t.Fatalf("waiting item:\n%s", out)
	}
	mustOK(t, cli(t, dir, "", "work", "cancel", "--id", a, "--human", "h"))
	out = mustOK(t, cli(t, dir, "", "work", "list")).out
	want := "blocked for good: depends on " + a + " (cancelled), which can never be done; drop it with: git ideate work update-meta --id " + b + " --expected-version 1 --depends-on \"\""
	if !strings.Contains(out, want) {
		t.Fatalf("want %q in:\n%s", want, out)
	}
	mustOK(t, cli(t, dir, "", "work", "update-meta", "--id", b, "--expected-version", "1", "--depends-on", ""))
	mustOK(t, cli(t, dir, "", "work", "claim", "--id", b, "--human", "h"))
}

// The first writes in a fresh repository leave no dangling object.
func TestFirstWritesLeaveNoDanglingTree(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "ideate.steering", "true")
	mustOK(t, cli(t, dir, "", "record", "decision", "--claim", "k", "--rationale", "r"))
	mustOK(t, cli(t, dir, "", "steering", "put", "--id", "GP-1", "--kind", "k", "--statement", "s"))
	createItem(t, dir, "A")
	cmd := exec.Command("git", "fsck", "--no-reflogs", "--no-progress")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "dangling") {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}
