package plan

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// exampleFS is the example plan set in memory.
func exampleFS(t testing.TB) fstest.MapFS {
	m := fstest.MapFS{}
	root := "testdata/example"
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func addExampleSeeds(f *testing.F) []string {
	m := exampleFS(f)
	var names []string
	for name, file := range m {
		names = append(names, name)
		f.Add(file.Data)
		f.Add(bytes.ReplaceAll(file.Data, []byte("\n"), []byte("\r\n")))
	}
	f.Add([]byte("---\ntype: tasks\n"))
	f.Add([]byte("| a \\| b | `x\\|y` |\n|---|---|\n| `` ` `` | \\|\n"))
	f.Add([]byte("## T1 — x\n- [ ] `a::B/c` — pass-on-red (why (nested)) rest\n```\n## T2\n"))
	return names
}

// FuzzMarkdown feeds any bytes to every reader: none may panic, and every
// finding names a line of the file.
func FuzzMarkdown(f *testing.F) {
	addExampleSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		d := parseMarkdown("x.md", src)
		n := len(d.lines)
		parseIntake(d)
		parseStories(d)
		parseStandards(d)
		parseSprintPlan(d)
		parseTasks(d, "S1-01")
		parseRubric(d)
		parseTestPlan(d)
		parsePlanReady(d)
		for _, p := range d.problems {
			if p.Line < 0 || p.Line > n {
				t.Fatalf("finding %+v outside the file's %d lines", p, n)
			}
		}
		for _, h := range d.heads {
			if h.idx < d.body || h.idx >= n {
				t.Fatalf("heading at %d outside body [%d,%d)", h.idx, d.body, n)
			}
		}
	})
}

// FuzzLoadCheck puts the fuzzed bytes in place of one example file (the
// which-th, in name order) and runs Load and Check over the whole set.
func FuzzLoadCheck(f *testing.F) {
	base := exampleFS(f)
	var names []string
	for name := range base {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		f.Add(uint8(i), base[name].Data)
		f.Add(uint8(i), bytes.ReplaceAll(base[name].Data, []byte("\n"), []byte("\r\n")))
	}
	f.Fuzz(func(t *testing.T, which uint8, src []byte) {
		name := names[int(which)%len(names)]
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m[name] = &fstest.MapFile{Data: src, Mode: 0o644}
		s, err := Load(context.Background(), m, Options{})
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		lines := strings.Count(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n") + 1
		for _, fd := range Check(s) {
			if fd.File == name && (fd.Line < 0 || fd.Line > lines) {
				t.Fatalf("finding %+v outside the file's %d lines", fd, lines)
			}
			if fd.Rule == "" || fd.Message == "" || (fd.Severity != Error && fd.Severity != Warning) {
				t.Fatalf("finding %+v is incomplete", fd)
			}
		}
	})
}
