package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/gitstore/oid"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// DefaultRoot is where the playbook keeps its artifacts (C2).
const DefaultRoot = "docs/agents"

// Options say which sprint to load.
type Options struct {
	// Root is the planning root inside the file system, slash-separated
	// (default DefaultRoot). It may also name a sprint directory itself.
	Root string
	// Sprint is the sprint number; 0 takes the highest-numbered
	// sprint<N> directory (numeric order: sprint10 comes after sprint9).
	Sprint int
}

var sprintDirRe = textfmt.Regexp(`^sprint(\d+)$`)
var storyDirRe = textfmt.Regexp(`(?i)^s(\d+)-(\d{2,})(?:-([a-z0-9-]+))?$`)

// LoadDir loads a sprint from a directory on disk (usually the top of a
// working tree).
func LoadDir(ctx context.Context, dir string, opt Options) (*Sprint, error) {
	return Load(ctx, os.DirFS(dir), opt)
}

// Load reads one sprint's planning artifacts from fsys. It fails only
// when there is no sprint to read (NOT_FOUND, SCHEMA for a bad option) or
// the file system fails; everything wrong inside the files is a Finding
// reported by Check. Load reads and never writes.
func Load(ctx context.Context, fsys fs.FS, opt Options) (*Sprint, error) {
	root := strings.Trim(path.Clean("/"+strings.ReplaceAll(opt.Root, "\\", "/")), "/")
	if opt.Root == "" {
		root = DefaultRoot
	}
	if opt.Sprint < 0 {
		return nil, apperr.New(apperr.Schema, "sprint number %d is negative", opt.Sprint)
	}
	if root == "" {
		root = "."
	}
	entries, err := fs.ReadDir(fsys, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.NotFound, "the planning directory %s does not exist", root)
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "read %s: %v", root, err)
	}
	s := &Sprint{}
	sprintDir, planRoot := "", root
	if hasFile(entries, "stories.md") || hasFile(entries, "plan.md") {
		// Root is a sprint directory itself.
		sprintDir, planRoot = root, path.Dir(root)
		if m := sprintDirRe().FindStringSubmatch(path.Base(root)); m != nil {
			s.Number, _ = strconv.Atoi(m[1])
		}
		if opt.Sprint != 0 && s.Number != 0 && opt.Sprint != s.Number {
			return nil, apperr.New(apperr.Schema, "%s is sprint %d, not sprint %d", root, s.Number, opt.Sprint)
		}
		if s.Number == 0 {
			s.Number = opt.Sprint
		}
		if s.Number == 0 {
			// A sprint directory not named sprint<N>: its stories.md or
			// plan.md front matter says which sprint it is.
			for _, name := range []string{"stories.md", "plan.md"} {
				if b, err := readFile(fsys, path.Join(root, name)); err == nil {
					if v, ok := parseMarkdown(name, b).front.Get("sprint"); ok {
						if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
							s.Number = n
							break
						}
					}
				}
			}
		}
	} else {
		best := -1
		for _, e := range entries {
			m := sprintDirRe().FindStringSubmatch(e.Name())
			if m == nil || !e.IsDir() {
				continue
			}
			n, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			if opt.Sprint == 0 && n > best || opt.Sprint == n {
				best = n
			}
		}
		if best < 0 {
			if opt.Sprint != 0 {
				return nil, apperr.New(apperr.NotFound, "%s/sprint%d does not exist", root, opt.Sprint)
			}
			return nil, apperr.New(apperr.NotFound, "no sprint<N> directory under %s", root)
		}
		s.Number = best
		sprintDir = path.Join(root, "sprint"+strconv.Itoa(best))
	}
	s.Dir = sprintDir
	l := &loader{ctx: ctx, fsys: fsys, s: s, planRoot: planRoot}

	if d := l.read(path.Join(sprintDir, "intake.md"), path.Join(planRoot, "intake.md")); d != nil {
		l.expect(d, "intake")
		s.Intake = parseIntake(d)
		l.done(d)
	}
	if d := l.read(path.Join(sprintDir, "standards.md"), path.Join(planRoot, "standards.md")); d != nil {
		l.expect(d, "standards")
		s.Standards = parseStandards(d)
		l.done(d)
	}
	if d := l.read(path.Join(sprintDir, "stories.md")); d != nil {
		l.expect(d, "stories")
		l.scanText(d, false)
		s.Stories = parseStories(d)
		l.done(d)
	}
	if d := l.read(path.Join(sprintDir, "plan.md")); d != nil {
		l.expect(d, "sprint-plan")
		l.scanText(d, true)
		s.Plan = parseSprintPlan(d)
		l.done(d)
	}
	if err := l.storyDirs(sprintDir); err != nil {
		return nil, err
	}
	if l.err != nil {
		return nil, l.err
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	s.TreeID = treeID(s.Files, planRoot)
	return s, nil
}

func hasFile(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name && !e.IsDir() {
			return true
		}
	}
	return false
}

type loader struct {
	ctx      context.Context
	fsys     fs.FS
	s        *Sprint
	planRoot string
	err      error
}

// read returns the first of paths that exists, parsed, or nil. A file
// that exists but cannot be read is a finding.
// MaxFile caps a plan file read: a planning document is never near it.
const MaxFile = 4 << 20

// readFile reads a plan file only when it is a regular file (a symlink
// followed to one) of at most MaxFile bytes: a committed standards.md that
// links to /dev/zero, or a FIFO, is refused without being opened.
func readFile(fsys fs.FS, p string) ([]byte, error) {
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%s holds %d bytes, over the cap of %d", p, fi.Size(), MaxFile)
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err == nil && len(b) > MaxFile {
		err = fmt.Errorf("%s grew over the cap of %d bytes", p, MaxFile)
	}
	return b, err
}

func (l *loader) read(paths ...string) *mdoc {
	if l.err != nil {
		return nil
	}
	if err := l.ctx.Err(); err != nil {
		l.err = err
		return nil
	}
	for _, p := range paths {
		b, err := readFile(l.fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.s.findings = append(l.s.findings, Finding{File: p, Rule: RuleFileUnreadable, Message: "cannot read the file: " + err.Error(), Severity: Error})
			return nil
		}
		l.s.Files = append(l.s.Files, File{Path: p, BlobID: oid.ComputeHash(oid.BlobObject, b).String()})
		d := parseMarkdown(p, b)
		for i, line := range d.lines {
			if strings.HasPrefix(strings.TrimSpace(line), TemplateMarker) {
				l.s.templated = append(l.s.templated, templated{path: p, line: i + 1})
				break
			}
		}
		return d
	}
	return nil
}

// expect checks the front matter type (C1: optional, but when present it
// must match the file's role) and, for sprint-level files, the sprint.
func (l *loader) expect(d *mdoc, typ string) {
	if !d.hasFront {
		return
	}
	if t, ok := d.front.Get("type"); ok && !strings.EqualFold(strings.TrimSpace(t), typ) {
		d.finding(d.front.line("type"), RuleFrontType, "front matter type is "+strconv.Quote(t)+", want "+strconv.Quote(typ))
	}
	if typ == "stories" || typ == "sprint-plan" || typ == "intake" || typ == "standards" {
		if v, ok := d.front.Get("sprint"); ok && path.Dir(d.path) == l.s.Dir {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n != l.s.Number {
				d.finding(d.front.line("sprint"), RuleFrontSprint, "front matter sprint is "+strconv.Quote(v)+", want "+strconv.Itoa(l.s.Number))
			}
		}
	}
}

func (l *loader) done(d *mdoc) {
	l.s.findings = append(l.s.findings, d.problems...)
}

var tbwRe = textfmt.Regexp(`\bTBW\b`)
var sprintRefRe = textfmt.Regexp(`\bS(\d+)-\d{2,}\b`)

// scanText applies the Stage-2 text rules (C18) to a planning artifact:
// the placeholder TBW is forbidden, and outside stories.md (later) no
// story of a later sprint may be named.
func (l *loader) scanText(d *mdoc, containment bool) {
	for i := d.body; i < len(d.lines); i++ {
		line := d.lines[i]
		if strings.Contains(line, "TBW") && tbwRe().MatchString(line) {
			d.finding(i+1, RuleTBW, "the placeholder TBW is left in a Stage-2 artifact")
		}
		if !containment || !hasStoryRef(line) {
			continue
		}
		for _, m := range sprintRefRe().FindAllStringSubmatch(line, -1) {
			if n, err := strconv.Atoi(m[1]); err == nil && n > l.s.Number {
				d.finding(i+1, RuleLaterSprintRef, m[0]+" belongs to a later sprint; only stories.md may name one")
				break
			}
		}
	}
}

// hasStoryRef is a fast pre-check for sprintRefRe: an S and a digit.
func hasStoryRef(l string) bool {
	for i := 0; i+1 < len(l); i++ {
		if l[i] == 'S' && l[i+1] >= '0' && l[i+1] <= '9' {
			return true
		}
	}
	return false
}

// storyDirs reads every sub-directory holding Stage-2 files. The story of
// a dir is its files' front matter `story:` first, then the dir name's
// `s<N>-<NN>-` prefix (C3).
func (l *loader) storyDirs(sprintDir string) error {
	entries, err := fs.ReadDir(l.fsys, sprintDir)
	if err != nil {
		return apperr.Wrap(apperr.Internal, err, "read %s: %v", sprintDir, err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := path.Join(sprintDir, e.Name())
		docs := map[string]*mdoc{}
		for _, name := range []string{"tasks.md", "validate.md", "plan.md", "plan-ready.md"} {
			if d := l.read(path.Join(dir, name)); d != nil {
				docs[name] = d
			}
		}
		if l.err != nil {
			return nil
		}
		if len(docs) == 0 {
			continue
		}
		story, from := "", ""
		for _, name := range []string{"tasks.md", "validate.md", "plan.md", "plan-ready.md"} {
			if d := docs[name]; d != nil {
				if v, ok := d.front.Get("story"); ok && strings.TrimSpace(v) != "" {
					story, from = strings.TrimSpace(v), name
					break
				}
			}
		}
		m := storyDirRe().FindStringSubmatch(e.Name())
		prefixID := ""
		if m != nil {
			prefixID = "S" + m[1] + "-" + m[2]
		}
		if story == "" {
			story = prefixID
		}
		sd := &StoryDir{Story: story, Dir: dir}
		if story == "" {
			l.s.findings = append(l.s.findings, Finding{File: dir, Rule: RuleDirUnknownStory, Message: "directory holds Stage-2 files but names no story (no front matter story: and no s<N>-<NN>- prefix)", Severity: Error})
		} else if prefixID == "" {
			l.s.findings = append(l.s.findings, Finding{File: path.Join(dir, from), Line: docs[from].front.line("story"), Rule: RuleDirUnprefixed, Message: "directory " + e.Name() + " holds story " + story + " but lacks the s<N>-<NN>- prefix", Severity: Warning})
		}
		types := map[string]string{"tasks.md": "tasks", "validate.md": "validate", "plan.md": "plan", "plan-ready.md": "plan-ready"}
		for _, name := range []string{"tasks.md", "validate.md", "plan.md", "plan-ready.md"} {
			d := docs[name]
			if d == nil {
				continue
			}
			l.expect(d, types[name])
			if name != "plan-ready.md" {
				l.scanText(d, true)
			}
			if v, ok := d.front.Get("story"); ok && story != "" && strings.TrimSpace(v) != story {
				d.finding(d.front.line("story"), RuleFrontStory, "front matter story is "+strconv.Quote(v)+", but this directory holds "+story)
			}
		}
		if d := docs["tasks.md"]; d != nil {
			sd.Tasks = parseTasks(d, story)
			l.done(d)
		}
		if d := docs["validate.md"]; d != nil {
			sd.Validate = parseRubric(d)
			l.done(d)
		}
		if d := docs["plan.md"]; d != nil {
			sd.TestPlan = parseTestPlan(d)
			l.done(d)
		}
		if d := docs["plan-ready.md"]; d != nil {
			sd.PlanReady = parsePlanReady(d)
			l.done(d)
		}
		l.s.StoryDirs = append(l.s.StoryDirs, sd)
	}
	return nil
}

// treeID is the git tree id that a tree holding exactly the planning
// files (at their paths below the planning root) would have. It is stable
// across machines, changes with any byte of any planning file, and does
// not change when execution-phase files (plan-ready.md, execution.log,
// init.md, output.md) are appended to. A verdict bound to it is void once
// the plan changes.
func treeID(files []File, root string) string {
	type node struct {
		files map[string]gitstore.Hash
		dirs  map[string]*node
	}
	newNode := func() *node { return &node{files: map[string]gitstore.Hash{}, dirs: map[string]*node{}} }
	top := newNode()
	for _, f := range files {
		if strings.HasSuffix(f.Path, "/plan-ready.md") {
			continue
		}
		rel := f.Path
		if root != "." && root != "" {
			rel = strings.TrimPrefix(f.Path, root+"/")
		}
		parts := strings.Split(rel, "/")
		n := top
		for _, p := range parts[:len(parts)-1] {
			c := n.dirs[p]
			if c == nil {
				c = newNode()
				n.dirs[p] = c
			}
			n = c
		}
		h, _ := gitstore.ParseHash(f.BlobID)
		n.files[parts[len(parts)-1]] = h
	}
	var hash func(n *node) gitstore.Hash
	hash = func(n *node) gitstore.Hash {
		var es []gitstore.TreeEntry
		for name, h := range n.files {
			es = append(es, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: name, Hash: h})
		}
		for name, c := range n.dirs {
			es = append(es, gitstore.TreeEntry{Mode: gitstore.ModeDir, Name: name, Hash: hash(c)})
		}
		return oid.ComputeHash(oid.TreeObject, gitstore.EncodeTree(es))
	}
	return hash(top).String()
}
