package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// tableDoc is the file holding the layer table, from the module root.
const tableDoc = "docs/ARCHITECTURE.md"

// knownExceptions are imports the rule forbids that the code still has,
// each with why and what removes it. Keyed "from -> to" with paths from
// the module root. Empty since record stopped importing the Claude Code
// transcript reader: add an entry only with its reason and the
// change that will remove it.
var knownExceptions = map[string]string{}

// row is one package in the layer table.
type row struct {
	path      string // from the module root, e.g. internal/record
	floor     int
	kind      string // lib, test, cmd, bench
	status    string // present, reserved
	sameFloor []string
	onlyFrom  []string // the packages that may import it; none: any the floors allow
	line      int
}

// pkg is one package of the module as go list sees it.
type pkg struct {
	path    string   // from the module root
	imports []string // the module's packages it imports, from the module root
}

func TestLayers_ImportRule(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, tableDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseTable(doc)
	if err != nil {
		t.Fatalf("%s: %v", tableDoc, err)
	}
	pkgs := listPackages(t, root)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages of the module; the test reads the wrong tree", len(pkgs))
	}
	problems := check(rows, pkgs, knownExceptions)
	if len(problems) > 0 {
		t.Fatalf("the import rule of %s (the layer table) is broken:\n  %s", tableDoc, strings.Join(problems, "\n  "))
	}
	t.Logf("%d rows, %d packages, every import edge within the rule (%d known exceptions)", len(rows), len(pkgs), len(knownExceptions))
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// goTool is the go command of the toolchain running the test.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// listPackages runs `go list -deps -json ./...` at root and returns the
// module's own packages with their direct imports of the module's
// packages (imports of _test.go files are not edges of the layering).
func listPackages(t *testing.T, root string) map[string]pkg {
	t.Helper()
	cmd := exec.Command(goTool(), "list", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./...: %v\n%s", err, stderr.String())
	}
	return decodePackages(t, out)
}

func decodePackages(t *testing.T, out []byte) map[string]pkg {
	t.Helper()
	type listed struct {
		ImportPath string
		Imports    []string
		Module     *struct {
			Path string
			Main bool
		}
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		mod := p.Module.Path
		rel := func(path string) (string, bool) {
			if path == mod {
				return ".", true
			}
			r, ok := strings.CutPrefix(path, mod+"/")
			return r, ok
		}
		from, _ := rel(p.ImportPath)
		q := pkg{path: from}
		for _, imp := range p.Imports {
			if to, ok := rel(imp); ok {
				q.imports = append(q.imports, to)
			}
		}
		pkgs[from] = q
	}
	return pkgs
}

// tableHeader is how the layer table's header starts.
const tableHeader = "| package | floor | kind | status | same floor | only from |"

// parseTable reads the layer table: the Markdown table whose header starts
// with tableHeader.
func parseTable(doc []byte) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(doc))
	n, in, found := 0, false, false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !in {
			if strings.HasPrefix(line, tableHeader) {
				if found {
					return nil, fmt.Errorf("line %d: a second layer table", n)
				}
				in, found = true, true
			}
			continue
		}
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		if strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 6 {
			return nil, fmt.Errorf("line %d: %d cells, want at least 6", n, len(cells))
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		r := row{line: n, kind: cells[2], status: cells[3]}
		paths := backticked(cells[0])
		if len(paths) != 1 {
			return nil, fmt.Errorf("line %d: the package cell %q is not one path in backticks", n, cells[0])
		}
		r.path = paths[0]
		var err error
		if r.floor, err = strconv.Atoi(cells[1]); err != nil || r.floor < 1 {
			return nil, fmt.Errorf("line %d: floor %q is not a positive number", n, cells[1])
		}
		switch r.kind {
		case "lib", "test", "cmd", "bench":
		default:
			return nil, fmt.Errorf("line %d: kind %q is not lib, test, cmd or bench", n, r.kind)
		}
		switch r.status {
		case "present", "reserved":
		default:
			return nil, fmt.Errorf("line %d: status %q is not present or reserved", n, r.status)
		}
		if c := cells[4]; c != "—" && c != "-" && c != "" {
			if r.sameFloor = backticked(c); len(r.sameFloor) == 0 {
				return nil, fmt.Errorf("line %d: same floor %q names no path in backticks", n, c)
			}
		}
		if c := cells[5]; c != "—" && c != "-" && c != "" {
			if r.onlyFrom = backticked(c); len(r.onlyFrom) == 0 {
				return nil, fmt.Errorf("line %d: only from %q names no path in backticks", n, c)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("no layer table (a header starting " + tableHeader + ")")
	}
	return rows, nil
}

// backticked returns the `quoted` spans of s.
func backticked(s string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(s, "`")
		if !ok {
			return out
		}
		span, after, ok := strings.Cut(rest, "`")
		if !ok {
			return out
		}
		out = append(out, span)
		s = after
	}
}

// check returns one sentence per breach of the rule, sorted.
func check(rows []row, pkgs map[string]pkg, exceptions map[string]string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byPath := map[string]row{}
	for _, r := range rows {
		if prev, dup := byPath[r.path]; dup {
			bad("%s has two rows (lines %d and %d)", r.path, prev.line, r.line)
		}
		byPath[r.path] = r
	}
	for _, r := range rows {
		for _, s := range r.onlyFrom {
			if _, ok := byPath[s]; !ok {
				bad("the row of %s (line %d) allows imports only from %s, which is not a row", r.path, r.line, s)
			}
		}
		for _, s := range r.sameFloor {
			if o, ok := byPath[s]; !ok || o.floor != r.floor {
				bad("the row of %s (line %d) allows %s on its floor, but %s is not a row on floor %d", r.path, r.line, s, s, r.floor)
			}
		}
		_, exists := pkgs[r.path]
		switch {
		case r.status == "present" && !exists:
			bad("%s is marked present (line %d) but there is no such package: remove the row, or mark it reserved", r.path, r.line)
		case r.status == "reserved" && exists:
			bad("%s exists but is marked reserved (line %d): mark it present", r.path, r.line)
		}
	}
	used := map[string]bool{}
	for _, p := range sortedPackages(pkgs) {
		from, ok := byPath[p.path]
		if !ok {
			bad("%s is not in the layer table: add a row with its floor (see DESIGN.md, Packages)", p.path)
			continue
		}
		for _, imp := range p.imports {
			to, ok := byPath[imp]
			if !ok {
				continue // reported as a missing row above
			}
			edge := p.path + " -> " + imp
			var why string
			switch {
			case to.kind == "test" && from.kind != "test" && from.kind != "bench":
				why = fmt.Sprintf("%s is a test helper; only _test.go files, test helpers and benches import it", imp)
			case to.floor > from.floor:
				why = fmt.Sprintf("floor %d imports floor %d", from.floor, to.floor)
			case to.floor == from.floor && !slices.Contains(from.sameFloor, imp):
				why = fmt.Sprintf("both on floor %d and the row of %s does not name %s under same floor", from.floor, p.path, imp)
			case len(to.onlyFrom) > 0 && !slices.Contains(to.onlyFrom, p.path):
				why = fmt.Sprintf("%s may be imported only from %s", imp, strings.Join(to.onlyFrom, ", "))
			default:
				continue
			}
			if _, ok := exceptions[edge]; ok {
				used[edge] = true
				continue
			}
			bad("forbidden import %s: %s", edge, why)
		}
	}
	for edge := range exceptions {
		if !used[edge] {
			bad("the known exception %q is no longer in the code (or no longer breaks the rule): delete it from knownExceptions", edge)
		}
	}
	sort.Strings(problems)
	return problems
}

func sortedPackages(pkgs map[string]pkg) []pkg {
	out := make([]pkg, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}
