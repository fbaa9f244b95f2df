package symbols

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
)

// Index is the definitions and uses of a set of files. It is built once
// and read by many: Add is not safe beside reads.
type Index struct {
	files map[string]*File
	refs  map[string]int // all files' uses, per name
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{files: map[string]*File{}, refs: map[string]int{}} }

// Add puts a parsed file in the index (replacing one of the same path).
func (x *Index) Add(f *File) {
	if old := x.files[f.Path]; old != nil {
		for n, c := range old.Refs {
			x.refs[n] -= c
		}
	}
	x.files[f.Path] = f
	for n, c := range f.Refs {
		x.refs[n] += c
	}
}

// Source is what Build reads files from: the paths to read and their
// bytes. A git tree, a directory or a map of test files all fit.
type Source interface {
	Paths() []string
	Read(p string) ([]byte, error)
}

// Build parses every file of src in a language the index reads. A file
// that cannot be read is an error; one that does not parse whole keeps
// what was found (File.ParseError says so).
func Build(ctx context.Context, src Source) (*Index, error) {
	x := NewIndex()
	for _, p := range src.Paths() {
		if LangOf(p) == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := src.Read(p)
		if err != nil {
			return nil, err
		}
		f, err := Parse(ctx, p, b)
		if err != nil {
			return nil, err
		}
		x.Add(f)
	}
	return x, nil
}

// File is the indexed file at p, nil when there is none.
func (x *Index) File(p string) *File { return x.files[p] }

// Files is the indexed paths, sorted.
func (x *Index) Files() []string {
	out := make([]string, 0, len(x.files))
	for p := range x.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Uses is how many times name is used in the indexed files, definitions'
// own names left out.
func (x *Index) Uses(name string) int { return x.refs[name] }

// All is every definition, by file then offset.
func (x *Index) All() []Symbol {
	var out []Symbol
	for _, p := range x.Files() {
		out = append(out, x.files[p].Defs...)
	}
	return out
}

// Find returns the definitions a name names: a bare name (`Format`) or a
// qualified one (`util.Format`, `pkg.Type.Method`, `mod.Class.method`);
// by file then offset.
func (x *Index) Find(name string) []Symbol {
	name = strings.TrimSpace(name)
	var out []Symbol
	last := name
	if i := strings.LastIndexAny(name, ".:/"); i >= 0 {
		last = name[i+1:]
	}
	for _, p := range x.Files() {
		for _, s := range x.files[p].Defs {
			if s.Name == last && s.Matches(name) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Dir is a Source over files on disk: Root and the slash-separated
// paths under it (the caller decides which: tracked files, say).
type Dir struct {
	Root string
	List []string
}

// Paths is d.List.
func (d Dir) Paths() []string { return d.List }

// Read reads one file under d.Root.
func (d Dir) Read(p string) ([]byte, error) {
	// The tree is what its workers left: a FIFO or a file far past any
	// source's size is refused, not read.
	b, err := osproc.ReadRegular(filepath.Join(d.Root, filepath.FromSlash(p)), MaxFile)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotFound, err, "cannot read %s", p)
	}
	return b, nil
}

// MaxFile caps a source file Dir reads.
const MaxFile = 8 << 20

// Map is a Source over files held in memory, by path.
type Map map[string][]byte

// Paths is the map's paths, sorted.
func (m Map) Paths() []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Read returns one file's bytes.
func (m Map) Read(p string) ([]byte, error) {
	b, ok := m[p]
	if !ok {
		return nil, apperr.New(apperr.NotFound, "no file %s", p)
	}
	return b, nil
}
