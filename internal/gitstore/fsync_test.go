package gitstore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// syncedFiles runs role (race_test.go's helper) in a process of its own
// under strace and returns the kinds of file it fsynced: "pack" and "idx"
// (a write's pack and its index), "ref" (a ref's lock, just before it is
// renamed over the ref), "loose" (a loose object), "dir".
func syncedFiles(t *testing.T, dir, role string) []string {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", out, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTEST_ROLE="+role, "GITSTORE_TEST_DIR="+dir, "GITSTORE_TEST_N=1",
		"GITSTORE_TEST_REF=refs/ideate/counter", "GIT_IDEATE_NO_MAINTENANCE=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "ptrace") || strings.Contains(string(b), "Operation not permitted") {
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("%s under strace: %v\n%s", role, err, b)
	}
	trace, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	// An fsync beside another thread's shows as "<unfinished ...>" and
	// resumes on a later line.
	for _, m := range regexp.MustCompile(`f(?:data)?sync\(\d+<([^>]*)>(?:\)\s+= 0| <unfinished)`).FindAllStringSubmatch(string(trace), -1) {
		p := m[1]
		switch base := filepath.Base(p); {
		case strings.HasPrefix(base, "tmp_pack_"):
			kinds = append(kinds, "pack")
		case strings.HasPrefix(base, "tmp_idx_"):
			kinds = append(kinds, "idx")
		case strings.HasSuffix(base, ".lock"):
			kinds = append(kinds, "ref")
		case strings.HasPrefix(base, "tmp_obj_"):
			kinds = append(kinds, "loose")
		default:
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				kinds = append(kinds, "dir")
			} else {
				kinds = append(kinds, p)
			}
		}
	}
	sort.Strings(kinds)
	return kinds
}

// A write forces to disk what git's core.fsync would force for the same
// commit written by git (read as git 2.39 reads the setting): its pack and
// index as git's loose objects, so nothing at git's default (pack,
// pack-metadata and commit-graph name no object a commit writes) and both
// with loose-object (or an aggregate holding it, or the deprecated
// core.fsyncObjectFiles); the ref with reference; nothing with "none" or
// core.fsyncMethod=writeout-only. ideate.fsync=true (LockPolicy.Fsync,
// set by the caller) adds the directories.
func TestWrite_FsyncAsGitsCoreFsyncSays(t *testing.T) {
	for _, tc := range []struct {
		name, role string
		config     [][2]string
		want       string
	}{
		{"default", "counter", nil, ""},
		{"default loose", "loose", nil, ""},
		{"pack and its metadata", "counter", [][2]string{{"core.fsync", "pack,pack-metadata"}}, ""},
		{"all", "counter", [][2]string{{"core.fsync", "all"}}, "idx,pack,ref"},
		{"committed", "counter", [][2]string{{"core.fsync", "committed"}}, "idx,pack,ref"},
		{"objects", "counter", [][2]string{{"core.fsync", "objects"}}, "idx,pack"},
		{"reference", "counter", [][2]string{{"core.fsync", "reference"}}, "ref"},
		{"none", "counter", [][2]string{{"core.fsync", "none"}}, ""},
		{"reference then none", "counter", [][2]string{{"core.fsync", "reference,none"}}, "ref"},
		{"a name's beginning", "counter", [][2]string{{"core.fsync", "loose,ref"}}, "idx,pack,ref"},
		{"a name and its negation", "counter", [][2]string{{"core.fsync", "loose-object,-loose-object"}}, "idx,pack"},
		{"loose-object", "loose", [][2]string{{"core.fsync", "loose-object"}}, "loose"},
		{"loose-object, a write", "counter", [][2]string{{"core.fsync", "loose-object"}}, "idx,pack"},
		{"fsyncObjectFiles", "loose", [][2]string{{"core.fsyncObjectFiles", "true"}}, "loose"},
		{"writeout-only", "counter", [][2]string{{"core.fsync", "all"}, {"core.fsyncMethod", "writeout-only"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gt.NewRepo(t)
			for _, kv := range tc.config {
				gt.Git(t, dir, "config", kv[0], kv[1])
			}
			if got := strings.Join(syncedFiles(t, dir, tc.role), ","); got != tc.want {
				t.Fatalf("fsynced %q, want %q", got, tc.want)
			}
			if tc.role == "counter" {
				gt.Fsck(t, dir)
			}
		})
	}
}
