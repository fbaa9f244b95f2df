package symbols

import (
	"context"
	"sort"
	"strings"
	"testing"
)

func keys(ss []Symbol) []string {
	var out []string
	for _, s := range ss {
		out = append(out, string(s.Kind)+" "+s.QName())
	}
	sort.Strings(out)
	return out
}

func mustIndex(t *testing.T, files map[string]string) *Index {
	t.Helper()
	m := Map{}
	for p, s := range files {
		m[p] = []byte(s)
	}
	x, err := Build(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestIndex_Find_GoQualified(t *testing.T) {
	x := mustIndex(t, map[string]string{
		"orphan/orphan.go": "package orphan\n\nfunc Format(s string) string { return s }\n",
		"util/util.go":     "package util\n\nfunc Format(s string) string { return \"<\" + s }\n\ntype A struct{}\ntype B struct{}\n\nfunc (A) String() string { return \"a\" }\nfunc (*B) String() string { return \"b\" }\n",
	})
	all := x.Find("Format")
	if len(all) != 2 || all[0].Key() == all[1].Key() {
		t.Fatalf("Format: %v", keys(all))
	}
	if got := keys(x.Find("util.Format")); len(got) != 1 || got[0] != "func util.Format" {
		t.Fatalf("util.Format: %v", got)
	}
	if got := keys(x.Find("orphan.Format")); len(got) != 1 || got[0] != "func orphan.Format" {
		t.Fatalf("orphan.Format: %v", got)
	}
	str := x.Find("String")
	if len(str) != 2 || str[0].Key() == str[1].Key() {
		t.Fatalf("String: %v", keys(str))
	}
	if got := keys(x.Find("util.B.String")); len(got) != 1 || got[0] != "method util.B.String" {
		t.Fatalf("util.B.String: %v", got)
	}
	if got := keys(x.Find("A.String")); len(got) != 1 || got[0] != "method util.A.String" {
		t.Fatalf("A.String: %v", got)
	}
}

// samples is one file per language with a function, a class or type
// with a method of the same name as a module function, and a constant.
var samples = map[string]string{
	"pkg/mod.py": `import os

LIMIT = 3

def run(x):
    return x + 1


class Runner:
    """doc"""

    def run(self, x):
        def inner():
            return 2
        return x * inner()

    @property
    def name(self):
        return "r"


@decorate
def _hidden():
    pass
`,
	"web/app.js": `import x from "y";

export function run(a) {
  return a + 1;
}

class Runner {
  run(a) {
    return a * 2;
  }
  get name() { return "r"; }
}

export const LIMIT = 3;
const helper = (a) => { return a - 1; };
`,
	"web/app.ts": `export interface Shape { area(): number }
export type ID = string;

export function run(a: number): number {
  return a + 1;
}

export class Runner {
  private count = 0;
  run(a: number): number {
    return a * 2;
  }
}

const helper = async (a: number): Promise<number> => {
  return a - 1;
};
`,
	"src/lib.rs": `use std::fmt;

pub const LIMIT: usize = 3;

pub fn run(a: i32) -> i32 {
    a + 1
}

pub struct Runner {
    count: usize,
}

impl Runner {
    pub fn run(&self, a: i32) -> i32 {
        a * 2
    }
}

impl fmt::Display for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {}
}
`,
}

var sampleWant = map[string][]string{
	"pkg/mod.py": {"class pkg.mod.Runner", "const pkg.mod.LIMIT", "func pkg.mod._hidden", "func pkg.mod.run", "method pkg.mod.Runner.name", "method pkg.mod.Runner.run"},
	"web/app.js": {"class web/app.Runner", "const web/app.LIMIT", "func web/app.helper", "func web/app.run", "method web/app.Runner.name", "method web/app.Runner.run"},
	"web/app.ts": {"class web/app.Runner", "func web/app.helper", "func web/app.run", "interface web/app.Shape", "method web/app.Runner.run", "type web/app.ID"},
	"src/lib.rs": {"const src.LIMIT", "func src.run", "method src.Runner.fmt", "method src.Runner.run", "type src.Runner"},
}

func checkSamples(t *testing.T, read func(p string, src []byte) *File) {
	for p, src := range samples {
		t.Run(p, func(t *testing.T) {
			f := read(p, []byte(src))
			got := keys(f.Defs)
			if strings.Join(got, "\n") != strings.Join(sampleWant[p], "\n") {
				t.Fatalf("defs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(sampleWant[p], "\n"))
			}
			var fn, m *Symbol
			for i, s := range f.Defs {
				if s.Name != "run" {
					continue
				}
				if s.Kind == Func {
					fn = &f.Defs[i]
				} else {
					m = &f.Defs[i]
				}
			}
			if fn == nil || m == nil || fn.Key() == m.Key() {
				t.Fatalf("run function and method not told apart: %v %v", fn, m)
			}
			for _, s := range []*Symbol{fn, m} {
				if !s.HasBody() {
					t.Fatalf("%s has no body", s.QName())
				}
				body := src[s.BodyStart:s.BodyEnd]
				if !strings.Contains(body, "1") && !strings.Contains(body, "2") {
					t.Fatalf("%s body %q", s.QName(), body)
				}
				if strings.Contains(body, "fn ") || strings.Contains(body, "def ") && s.Kind == Func {
					t.Fatalf("%s body runs into the next definition: %q", s.QName(), body)
				}
				if !strings.HasPrefix(src[s.Start:], "pub fn") && !strings.HasPrefix(src[s.Start:], "def") &&
					!strings.HasPrefix(src[s.Start:], "export function") && !strings.HasPrefix(src[s.Start:], "run") &&
					!strings.HasPrefix(src[s.Start:], "pub fn") {
					t.Fatalf("%s starts at %q", s.QName(), src[s.Start:s.Start+10])
				}
			}
		})
	}
}

// TestParse_Languages reads each sample with the reader this process
// has: tree-sitter through the helper, or the fallback.
func TestParse_Languages(t *testing.T) {
	checkSamples(t, func(p string, src []byte) *File {
		f, err := Parse(context.Background(), p, src)
		if err != nil {
			t.Fatal(err)
		}
		if f.Weaker != Weaker() {
			t.Fatalf("%s: weaker %v with the helper found %v", p, f.Weaker, !Weaker())
		}
		return f
	})
}

// TestParse_Fallback reads each sample with the fallback reader, which
// git-ideate uses without the helper; every definition is marked weaker.
func TestParse_Fallback(t *testing.T) {
	checkSamples(t, func(p string, src []byte) *File {
		lang := LangOf(p)
		f := &File{Path: p, Lang: lang, Package: moduleOf(lang, p)}
		f.tokens, f.Refs = lexGeneric(lang, src)
		for _, d := range fallbackDefs(lang, src, f.tokens) {
			f.Defs = append(f.Defs, Symbol{Lang: lang, Dir: dirOf(p), Package: f.Package, Receiver: d.recv, Name: d.name,
				Kind: d.kind, File: p, Start: d.start, End: d.end, BodyStart: d.bodyStart, BodyEnd: d.bodyEnd})
		}
		return f
	})
}

func TestIndex_Uses(t *testing.T) {
	x := mustIndex(t, map[string]string{
		"a/a.go": "package a\n\nfunc used() int { return 1 }\nfunc unused() int { return used() }\n",
		"b.py":   "def f():\n    return g()\n\ndef g():\n    return 1\n\ndef h():\n    return getattr(x, 'k')\n",
	})
	for name, want := range map[string]int{"used": 1, "unused": 0, "f": 0, "g": 1, "h": 0, "k": 1} {
		if got := x.Uses(name); got != want {
			t.Errorf("Uses(%s) = %d, want %d", name, got, want)
		}
	}
}
