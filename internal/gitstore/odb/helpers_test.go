package odb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// gitEnv is a hermetic environment for the git CLI.
func gitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
	)
}

// runGit runs git in dir, feeding stdin, and returns stdout.
func runGit(tb testing.TB, dir string, stdin io.Reader, args ...string) string {
	tb.Helper()
	full := append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "init.defaultBranch=main"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// initRepo creates an empty non-bare repository and returns its path.
func initRepo(tb testing.TB, dir string) string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	runGit(tb, dir, nil, "init", "-q")
	return dir
}

func objectsDir(repo string) string { return filepath.Join(repo, ".git", "objects") }

// fastImport builds a git fast-import stream.
type fastImport struct {
	buf  bytes.Buffer
	when int64
}

type fileOp struct {
	path    string
	content string // "" with del == true deletes
	del     bool
}

func (f *fastImport) data(s string) {
	fmt.Fprintf(&f.buf, "data %d\n%s\n", len(s), s)
}

func (f *fastImport) commit(branch, msg string, ops ...fileOp) {
	f.when++
	fmt.Fprintf(&f.buf, "commit refs/heads/%s\ncommitter Test <test@example.com> %d +0000\n", branch, 1700000000+f.when)
	f.data(msg)
	for _, op := range ops {
		if op.del {
			fmt.Fprintf(&f.buf, "D %s\n", op.path)
			continue
		}
		fmt.Fprintf(&f.buf, "M 100644 inline %s\n", op.path)
		f.data(op.content)
	}
	f.buf.WriteString("\n")
}

func (f *fastImport) tag(name, from, msg string) {
	f.when++
	fmt.Fprintf(&f.buf, "tag %s\nfrom %s\ntagger Test <test@example.com> %d +0000\n", name, from, 1700000000+f.when)
	f.data(msg)
}

func (f *fastImport) run(tb testing.TB, repo string) {
	tb.Helper()
	f.buf.WriteString("done\n")
	runGit(tb, repo, &f.buf, "fast-import", "--quiet", "--done")
	f.buf.Reset()
}

// bigFile returns a text of n lines where line i%n is marked by version v.
func bigFile(n, v int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i == v%n {
			fmt.Fprintf(&b, "line %04d edited in version %d\n", i, v)
		} else {
			fmt.Fprintf(&b, "line %04d: the quick brown fox jumps over the lazy dog\n", i)
		}
	}
	return b.String()
}

// deepHistory writes commits editing one big file many times plus many
// small files spread over directories (so many small trees), and a tag.
func deepHistory(tb testing.TB, repo string, commits int, branch string) {
	tb.Helper()
	var fi fastImport
	for i := 0; i < commits; i++ {
		fi.commit(branch, fmt.Sprintf("%s commit %d\n", branch, i),
			fileOp{path: "big.txt", content: bigFile(300, i)},
			fileOp{path: fmt.Sprintf("d%02d/e%d/f%04d.txt", i%20, i%3, i), content: fmt.Sprintf("small file %d of %s\n", i, branch)},
		)
	}
	fi.tag("v-"+branch, "refs/heads/"+branch, "annotated tag on "+branch+"\n")
	fi.run(tb, repo)
}

type catObject struct {
	hash oid.Hash
	typ  string
	data []byte
}

// allObjects lists every object git sees in repo (including alternates) and
// streams their contents through one `git cat-file --batch` process.
func allObjects(tb testing.TB, repo string) []catObject {
	tb.Helper()
	list := runGit(tb, repo, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	names := strings.Fields(list)
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = repo
	cmd.Env = gitEnv(repo)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReaderSize(stdout, 1<<16)
	out := make([]catObject, 0, len(names))
	for range names {
		line, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("cat-file --batch: %v (%s)", err, errb.String())
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			tb.Fatalf("cat-file --batch: bad header %q", line)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			tb.Fatal(err)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(br, data); err != nil {
			tb.Fatal(err)
		}
		out = append(out, catObject{oid.NewHash(f[0]), f[1], data[:size]})
	}
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("cat-file --batch: %v (%s)", err, errb.String())
	}
	return out
}

// compareAll reads every object of repo through db and compares it with
// git's answer; it returns the number of objects compared.
func compareAll(tb testing.TB, repo string, db *DB) int {
	tb.Helper()
	objs := allObjects(tb, repo)
	if len(objs) == 0 {
		tb.Fatal("repository has no objects")
	}
	for _, o := range objs {
		typ, data, err := db.Read(o.hash)
		if err != nil {
			tb.Fatalf("Read %s (%s): %v", o.hash, o.typ, err)
		}
		if typ.String() != o.typ {
			tb.Fatalf("Read %s: type %s, git says %s", o.hash, typ, o.typ)
		}
		if !bytes.Equal(data, o.data) {
			tb.Fatalf("Read %s: content differs from git (%d vs %d bytes)", o.hash, len(data), len(o.data))
		}
	}
	return len(objs)
}

// packFiles lists the .pack files of an objects directory.
func packFiles(tb testing.TB, objects string) []string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(objects, "pack", "*.pack"))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// entryTypeCounts parses every entry header of every mapped pack.
func entryTypeCounts(tb testing.TB, db *DB) map[byte]int {
	tb.Helper()
	db.mu.RLock()
	defer db.mu.RUnlock()
	counts := map[byte]int{}
	for _, s := range db.stores {
		for _, p := range s.packs {
			for i := 0; i < p.n; i++ {
				off, err := p.offsetAt(i)
				if err != nil {
					tb.Fatal(err)
				}
				h, err := p.header(off)
				if err != nil {
					tb.Fatal(err)
				}
				counts[h.typ]++
			}
		}
	}
	return counts
}

func mappedPacks(db *DB) int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	n := 0
	for _, s := range db.stores {
		n += len(s.packs)
	}
	return n
}

func openDB(tb testing.TB, objects string) *DB {
	tb.Helper()
	db, err := Open(objects)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
