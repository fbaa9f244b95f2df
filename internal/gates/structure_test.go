package gates

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/symbols"
)

// structCase is one language's planted structure: a base tree, and files
// a task adds with an orphan, a renamed copy of an existing function and
// a helper duplicated under its own name.
type structCase struct {
	base, added map[string]string
	orphan      string // qualified name
	copyOf      string // the renamed copy's qualified name
	helper      string // the duplicated helper's qualified name
}

const goNormalize = `
	out := make([]string, 0, len(in))
	for i, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if i > 0 && s == in[i-1] {
			continue
		}
		out = append(out, strings.ToLower(s))
	}
	sort.Strings(out)
	return out
`

var structCases = map[string]structCase{
	"go": {
		base: map[string]string{
			"util/util.go": "package util\n\nimport (\n\t\"sort\"\n\t\"strings\"\n)\n\n// Normalize cleans lines.\nfunc Normalize(in []string) []string {" + goNormalize + "}\n\nfunc clamp(v, lo, hi int) int {\n\tif v < lo {\n\t\treturn lo\n\t}\n\tif v > hi {\n\t\treturn hi\n\t}\n\treturn v\n}\n\nfunc Use(v int) int { return clamp(v, 0, 9) }\n",
			"main.go":      "package main\n\nimport \"example.com/m/util\"\n\nfunc main() { _ = util.Normalize(nil); _ = util.Use(1) }\n",
		},
		added: map[string]string{
			"report/report.go": "package report\n\nimport (\n\t\"sort\"\n\t\"strings\"\n)\n\n// Clean cleans lines.\nfunc Clean(lines []string) []string {" + strings.ReplaceAll(strings.ReplaceAll(goNormalize, "out", "res"), "\"#\"", "\"//\"") + "}\n\nfunc clamp(n, a, b int) int {\n\tif n < a {\n\t\treturn a\n\t}\n\tif n > b {\n\t\treturn b\n\t}\n\treturn n\n}\n\nfunc Score(v int) int { return clamp(v, 1, 5) }\n\nfunc leftover(x int) int { return x * 2 }\n",
			"main.go":          "package main\n\nimport (\n\t\"example.com/m/report\"\n\t\"example.com/m/util\"\n)\n\nfunc main() { _ = util.Normalize(nil); _ = util.Use(1); _ = report.Clean(nil); _ = report.Score(2) }\n",
		},
		orphan: "report.leftover", copyOf: "report.Clean", helper: "report.clamp",
	},
	"python": {
		base: map[string]string{
			"pkg/util.py": "def normalize(lines):\n    out = []\n    for i, s in enumerate(lines):\n        s = s.strip()\n        if not s or s.startswith('#'):\n            continue\n        if i > 0 and s == lines[i - 1]:\n            continue\n        out.append(s.lower())\n    out.sort()\n    return out\n\n\ndef _clamp(v, lo, hi):\n    if v < lo:\n        return lo\n    if v > hi:\n        return hi\n    return v\n\n\ndef use(v):\n    return _clamp(v, 0, 9)\n",
			"app.py":      "from pkg.util import normalize, use\n\nnormalize([])\nuse(1)\n",
		},
		added: map[string]string{
			"pkg/report.py": "def clean(rows):\n    out = []\n    for j, r in enumerate(rows):\n        r = r.strip()\n        if not r or r.startswith('//'):\n            continue\n        if j > 0 and r == rows[j - 1]:\n            continue\n        out.append(r.lower())\n    out.sort()\n    return out\n\n\ndef _clamp(n, a, b):\n    if n < a:\n        return a\n    if n > b:\n        return b\n    return n\n\n\ndef score(v):\n    return _clamp(v, 1, 5)\n\n\ndef _leftover(x):\n    return x * 2\n",
			"app.py":        "from pkg.util import normalize, use\nfrom pkg.report import clean, score\n\nnormalize([])\nuse(1)\nclean([])\nscore(2)\n",
		},
		orphan: "pkg.report._leftover", copyOf: "pkg.report.clean", helper: "pkg.report._clamp",
	},
	"typescript": {
		base: map[string]string{
			"src/util.ts": "export function normalize(lines: string[]): string[] {\n  const out: string[] = [];\n  for (let i = 0; i < lines.length; i++) {\n    const s = lines[i].trim();\n    if (s === \"\" || s.startsWith(\"#\")) {\n      continue;\n    }\n    if (i > 0 && s === lines[i - 1]) {\n      continue;\n    }\n    out.push(s.toLowerCase());\n  }\n  out.sort();\n  return out;\n}\n\nfunction clamp(v: number, lo: number, hi: number): number {\n  if (v < lo) {\n    return lo;\n  }\n  if (v > hi) {\n    return hi;\n  }\n  return v;\n}\n\nexport function use(v: number): number {\n  return clamp(v, 0, 9);\n}\n",
			"src/main.ts": "import { normalize, use } from \"./util\";\nnormalize([]);\nuse(1);\n",
		},
		added: map[string]string{
			"src/report.ts": "export function clean(rows: string[]): string[] {\n  const out: string[] = [];\n  for (let j = 0; j < rows.length; j++) {\n    const r = rows[j].trim();\n    if (r === \"\" || r.startsWith(\"//\")) {\n      continue;\n    }\n    if (j > 0 && r === rows[j - 1]) {\n      continue;\n    }\n    out.push(r.toLowerCase());\n  }\n  out.sort();\n  return out;\n}\n\nfunction clamp(n: number, a: number, b: number): number {\n  if (n < a) {\n    return a;\n  }\n  if (n > b) {\n    return b;\n  }\n  return n;\n}\n\nexport function score(v: number): number {\n  return clamp(v, 1, 5);\n}\n\nfunction leftover(x: number): number {\n  return x * 2;\n}\n",
			"src/main.ts":   "import { normalize, use } from \"./util\";\nimport { clean, score } from \"./report\";\nnormalize([]);\nuse(1);\nclean([]);\nscore(2);\n",
		},
		orphan: "src/report.leftover", copyOf: "src/report.clean", helper: "src/report.clamp",
	},
	"rust": {
		base: map[string]string{
			"src/util.rs": "pub fn normalize(lines: &[String]) -> Vec<String> {\n    let mut out = Vec::new();\n    for (i, s) in lines.iter().enumerate() {\n        let s = s.trim();\n        if s.is_empty() || s.starts_with('#') {\n            continue;\n        }\n        if i > 0 && s == lines[i - 1] {\n            continue;\n        }\n        out.push(s.to_lowercase());\n    }\n    out.sort();\n    out\n}\n\nfn clamp(v: i32, lo: i32, hi: i32) -> i32 {\n    if v < lo {\n        return lo;\n    }\n    if v > hi {\n        return hi;\n    }\n    v\n}\n\npub fn use_it(v: i32) -> i32 {\n    clamp(v, 0, 9)\n}\n",
			"src/main.rs": "mod util;\nfn main() {\n    util::normalize(&[]);\n    util::use_it(1);\n}\n",
		},
		added: map[string]string{
			"src/report.rs": "pub fn clean(rows: &[String]) -> Vec<String> {\n    let mut out = Vec::new();\n    for (j, r) in rows.iter().enumerate() {\n        let r = r.trim();\n        if r.is_empty() || r.starts_with('/') {\n            continue;\n        }\n        if j > 0 && r == rows[j - 1] {\n            continue;\n        }\n        out.push(r.to_lowercase());\n    }\n    out.sort();\n    out\n}\n\nfn clamp(n: i32, a: i32, b: i32) -> i32 {\n    if n < a {\n        return a;\n    }\n    if n > b {\n        return b;\n    }\n    n\n}\n\npub fn score(v: i32) -> i32 {\n    clamp(v, 1, 5)\n}\n\nfn leftover(x: i32) -> i32 {\n    x * 2\n}\n",
			"src/main.rs":   "mod util;\nmod report;\nfn main() {\n    util::normalize(&[]);\n    util::use_it(1);\n    report::clean(&[]);\n    report::score(2);\n}\n",
		},
		orphan: "src::report.leftover", copyOf: "src::report.clean", helper: "src::report.clamp",
	},
}

// headAndAdded builds the index at the task's head and the symbols its
// diff added, the way CheckStructure does from git trees.
func headAndAdded(t *testing.T, c structCase) (*symbols.Index, []symbols.Symbol) {
	t.Helper()
	head := symbols.Map{}
	for p, s := range c.base {
		head[p] = []byte(s)
	}
	for p, s := range c.added {
		head[p] = []byte(s)
	}
	x, err := symbols.Build(context.Background(), head)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for p, s := range c.base {
		f, err := symbols.Parse(context.Background(), p, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Defs {
			old[d.Key()] = true
		}
	}
	var added []symbols.Symbol
	for p := range c.added {
		for _, d := range x.File(p).Defs {
			if !old[d.Key()] {
				added = append(added, d)
			}
		}
	}
	return x, added
}

func TestAnalyzeStructure_Planted(t *testing.T) {
	for lang, c := range structCases {
		t.Run(lang, func(t *testing.T) {
			x, added := headAndAdded(t, c)
			got := map[string]string{}
			for _, f := range AnalyzeStructure(x, added, nil, DefaultStructure) {
				if f.Severity == SevHigh {
					got[f.Class+" "+f.Symbol] = f.Detail
				}
			}
			want := []string{ClassOrphan + " " + c.orphan, ClassNearCopy + " " + c.copyOf, ClassDuplicateHelper + " " + c.helper}
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			sort.Strings(want)
			if strings.Join(keys, "\n") != strings.Join(want, "\n") {
				t.Fatalf("high findings:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestAnalyzeStructure_ParallelImpl(t *testing.T) {
	c := structCase{
		base: map[string]string{"strutil/doc.go": "package strutil\n"},
		added: map[string]string{
			"strutil/reverse.go": "package strutil\n\nfunc Reverse(s string) string { return s }\n",
			"textutil/rev.go":    "package textutil\n\nfunc Reverse(s string) string { return s + \"\" }\n",
			"main.go":            "package main\n\nfunc main() { strutil.Reverse(\"\"); textutil.Reverse(\"\") }\n",
		},
	}
	x, added := headAndAdded(t, c)
	var got []string
	for _, f := range AnalyzeStructure(x, added, []string{"strutil.Reverse"}, DefaultStructure) {
		got = append(got, f.Severity+" "+f.Class+" "+f.Symbol)
	}
	if strings.Join(got, ";") != "high parallel_impl textutil.Reverse" {
		t.Fatalf("findings: %v", got)
	}
}

// TestAnalyzeStructure_QualifiedNotBare: two packages' Format and two
// receivers' String with different bodies are no finding.
func TestAnalyzeStructure_QualifiedNotBare(t *testing.T) {
	c := structCase{
		base: map[string]string{"version/version.go": "package version\n\ntype V struct{ n int }\n\nfunc (v V) String() string { return \"v\" }\n"},
		added: map[string]string{
			"op/op.go": "package op\n\ntype Op int\n\nfunc (o Op) String() string {\n\tswitch o {\n\tcase 0:\n\t\treturn \"add\"\n\t}\n\treturn \"?\"\n}\n\nfunc Format(o Op) string { return o.String() }\n",
			"main.go":  "package main\n\nfunc main() { _ = op.Format(0) }\n",
		},
	}
	x, added := headAndAdded(t, c)
	if fs := AnalyzeStructure(x, added, []string{"op.Op.String", "op.Format"}, DefaultStructure); len(fs) != 0 {
		t.Fatalf("findings: %+v", fs)
	}
}

// everythingAdded judges a whole tree as if one task had added all of it:
// the strictest reading, which must hold no high finding on real code.
func everythingAdded(t *testing.T, root string, skip func(p string) bool) (files int, high []Finding) {
	t.Helper()
	var list []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || skippedDir(rel+"/x")) || skip(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if symbols.LangOf(rel) != "" {
			list = append(list, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	x, err := symbols.Build(context.Background(), symbols.Dir{Root: root, List: list})
	if err != nil {
		t.Fatal(err)
	}
	fs := AnalyzeStructure(x, x.All(), nil, DefaultStructure)
	for _, f := range fs {
		if f.Severity == SevHigh {
			high = append(high, f)
		}
	}
	return len(list), high
}

func TestAnalyzeStructure_OwnTreeQuiet(t *testing.T) {
	root, _ := filepath.Abs("../..")
	n, high := everythingAdded(t, root, func(string) bool { return false })
	if n < 100 {
		t.Fatalf("only %d files under %s", n, root)
	}
	// Real duplicates in this tree: two packages each keep a copy of a
	// small helper. They are true findings, kept here so the test fails on
	// any new one.
	known := map[string]bool{
		"duplicate_helper record.shown": true, // board.shown
		"duplicate_helper board.shown":  true,
		"near_copy transcripts.marshal": true, // paging.marshalPayload: JSON without HTML escaping, newline cut
	}
	for _, f := range high {
		if known[f.Class+" "+f.Symbol] {
			t.Logf("known: %s %s %s:%d", f.Class, f.Symbol, f.File, f.Line)
			continue
		}
		t.Errorf("%s %s %s:%d: %s", f.Class, f.Symbol, f.File, f.Line, f.Detail)
	}
}

func TestAnalyzeStructure_GoRootQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("reads GOROOT/src/net/http")
	}
	root := filepath.Join(runtime.GOROOT(), "src", "net", "http")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no GOROOT source: %v", err)
	}
	// The package itself, not the packages under it.
	n, high := everythingAdded(t, root, func(p string) bool { return p != "." })
	t.Logf("%d files", n)
	for _, f := range high {
		t.Errorf("%s %s %s:%d: %s", f.Class, f.Symbol, f.File, f.Line, f.Detail)
	}
}

// similarCase is one language's renamed copy of the planted base's
// normalize with one line edited, and a different function of about its
// length.
type similarCase struct {
	file, copy, other string // the added file; the copy's and the other's qualified names
	src               string
}

var similarCases = map[string]similarCase{
	"go": {file: "tidy/tidy.go", copy: "tidy.Tidy", other: "tidy.Histogram", src: "package tidy\n\nimport (\n\t\"sort\"\n\t\"strings\"\n)\n\n" +
		"func Tidy(lines []string) []string {\n\tres := make([]string, 0, len(lines))\n\tfor i, s := range lines {\n\t\ts = strings.TrimSpace(s)\n\t\tif s == \"\" || strings.HasPrefix(s, \"#\") {\n\t\t\tcontinue\n\t\t}\n" +
		"\t\tif i > 1 && s == lines[i-2] && s != \"-\" {\n\t\t\tcontinue\n\t\t}\n\t\tres = append(res, strings.ToLower(s))\n\t}\n\tsort.Strings(res)\n\treturn res\n}\n\n" +
		"func Histogram(words []string) map[string]int {\n\tcounts := make(map[string]int, len(words))\n\tlongest := 0\n\tfor _, w := range words {\n\t\tw = strings.ToUpper(strings.TrimSpace(w))\n\t\tif len(w) > longest {\n\t\t\tlongest = len(w)\n\t\t}\n\t\tcounts[w]++\n\t}\n\tif longest > 10 {\n\t\tdelete(counts, \"\")\n\t}\n\tfor k, n := range counts {\n\t\tif n < 2 {\n\t\t\tdelete(counts, k)\n\t\t}\n\t}\n\treturn counts\n}\n"},
	"python": {file: "pkg/tidy.py", copy: "pkg.tidy.tidy", other: "pkg.tidy.histogram", src: "def tidy(rows):\n    acc = []\n    for j, r in enumerate(rows):\n        r = r.strip()\n        if not r or r.startswith('#'):\n            continue\n" +
		"        if j > 1 and r == rows[j - 2] and r != '-':\n            continue\n        acc.append(r.lower())\n    acc.sort()\n    return acc\n\n\n" +
		"def histogram(words):\n    counts = {}\n    longest = 0\n    for w in words:\n        w = w.strip().upper()\n        if len(w) > longest:\n            longest = len(w)\n        counts[w] = counts.get(w, 0) + 1\n    if longest > 10:\n        counts.pop('', None)\n    return {k: n for k, n in counts.items() if n > 1}\n"},
	"typescript": {file: "src/tidy.ts", copy: "src/tidy.tidy", other: "src/tidy.histogram", src: "export function tidy(rows: string[]): string[] {\n  const acc: string[] = [];\n  for (let j = 0; j < rows.length; j++) {\n    const r = rows[j].trim();\n    if (r === \"\" || r.startsWith(\"#\")) {\n      continue;\n    }\n" +
		"    if (j > 1 && r === rows[j - 2] && r !== \"-\") {\n      continue;\n    }\n    acc.push(r.toLowerCase());\n  }\n  acc.sort();\n  return acc;\n}\n\n" +
		"export function histogram(words: string[]): Map<string, number> {\n  const counts = new Map<string, number>();\n  let longest = 0;\n  for (const w0 of words) {\n    const w = w0.trim().toUpperCase();\n    if (w.length > longest) {\n      longest = w.length;\n    }\n    counts.set(w, (counts.get(w) ?? 0) + 1);\n  }\n  if (longest > 10) {\n    counts.delete(\"\");\n  }\n  return counts;\n}\n"},
	"rust": {file: "src/tidy.rs", copy: "src::tidy.tidy", other: "src::tidy.histogram", src: "pub fn tidy(rows: &[String]) -> Vec<String> {\n    let mut acc = Vec::new();\n    for (j, r) in rows.iter().enumerate() {\n        let r = r.trim();\n        if r.is_empty() || r.starts_with('#') {\n            continue;\n        }\n" +
		"        if j > 1 && r == rows[j - 2] && r != \"-\" {\n            continue;\n        }\n        acc.push(r.to_lowercase());\n    }\n    acc.sort();\n    acc\n}\n\n" +
		"pub fn histogram(words: &[String]) -> std::collections::HashMap<String, usize> {\n    let mut counts = std::collections::HashMap::new();\n    let mut longest = 0;\n    for w in words {\n        let w = w.trim().to_uppercase();\n        if w.len() > longest {\n            longest = w.len();\n        }\n        *counts.entry(w).or_insert(0) += 1;\n    }\n    if longest > 10 {\n        counts.remove(\"\");\n    }\n    counts.retain(|_, n| *n > 1);\n    counts\n}\n"},
}

// TestAnalyzeStructure_Similar: a renamed copy with one line edited is a
// near copy by similarity (not equal, so not by the hash), and a
// different function of about its length is not; with the similarity
// check off (1), the edited copy is not found.
func TestAnalyzeStructure_Similar(t *testing.T) {
	for lang, sc := range similarCases {
		t.Run(lang, func(t *testing.T) {
			c := structCase{base: structCases[lang].base, added: map[string]string{sc.file: sc.src}}
			x, added := headAndAdded(t, c)
			if len(added) != 2 {
				t.Fatalf("added: %+v", added)
			}
			near := map[string]Finding{}
			for _, f := range AnalyzeStructure(x, added, nil, DefaultStructure) {
				if f.Class == ClassNearCopy || f.Class == ClassDuplicateHelper {
					near[f.Symbol] = f
				}
			}
			f, ok := near[sc.copy]
			if !ok || f.Severity != SevHigh || !strings.Contains(f.Detail, "match in order") || !strings.Contains(strings.ToLower(f.Other), "normalize") {
				t.Errorf("the edited copy %s: %+v (all: %+v)", sc.copy, f, near)
			}
			if f, ok := near[sc.other]; ok {
				t.Errorf("a different function is a near copy: %+v", f)
			}
			exact := DefaultStructure
			exact.Similarity = 1
			for _, f := range AnalyzeStructure(x, added, nil, exact) {
				if f.Class == ClassNearCopy {
					t.Errorf("similarity 1 found a near copy: %+v", f)
				}
			}
		})
	}
}

// TestSimilarity_Measure pins the measure: equal is 1, disjoint 0, and a
// 100-token body with 8 tokens changed is 0.92.
func TestSimilarity_Measure(t *testing.T) {
	a := make([]uint32, 100)
	for i := range a {
		a[i] = uint32(i)
	}
	b := append([]uint32(nil), a...)
	for i := 40; i < 48; i++ {
		b[i] = 1000 + uint32(i)
	}
	for _, c := range []struct {
		a, b []uint32
		want float64
	}{{a, a, 1}, {a, []uint32{500, 501}, 0}, {a, b, 0.92}, {nil, nil, 1}, {a, nil, 0}} {
		if got, ok := similarity(c.a, c.b); !ok || got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("similarity(%d, %d tokens) = %v, %v; want %v", len(c.a), len(c.b), got, ok, c.want)
		}
	}
}

// AnalyzeStructure judges the added symbols against the whole index: an
// orphan (no use anywhere), a near copy (a normalized body equal to one
// under another name), a duplicated helper (the same name and body in
// another package or module) and a parallel implementation (a second
// definition of a symbol the plan declares). Symbols in test files and
// generated files are neither judged nor compared.
func AnalyzeStructure(x *symbols.Index, added []symbols.Symbol, declared []string, cfg StructureConfig) []Finding {
	facts := map[string]*fileFacts{}
	for _, p := range x.Files() {
		facts[p] = factsOf(x.File(p))
	}
	return analyze(x, facts, added, declared, cfg)
}
