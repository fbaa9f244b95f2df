package plan

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// TemplateMarker starts the line plan new writes at the top of every
// template. While a planning file holds it, Check reports the file as
// not yet filled (RuleTemplate), so an example can never pass for a plan.
const TemplateMarker = "<!-- ideate:template"

//go:embed templates
var templates embed.FS

// NewSprint writes sprint n's planning artifacts from the templates
// under dir/root/sprint<n>/: intake.md, standards.md (with its Test
// runners and Gate matrix), stories.md, the sprint plan plan.md and one
// example story directory (tasks.md, plan.md, validate.md), each with
// every section the check asks for and a filled example story. It
// returns the written paths, relative to dir. A sprint directory that
// already exists is a Conflict and nothing is written: plan new never
// overwrites a plan.
func NewSprint(dir, root string, n int) ([]string, error) {
	if n <= 0 {
		return nil, apperr.New(apperr.Schema, "--sprint must be a positive number, not %d", n)
	}
	sprint := path.Join(root, "sprint"+strconv.Itoa(n))
	abs := filepath.Join(dir, filepath.FromSlash(sprint))
	if _, err := os.Stat(abs); err == nil {
		return nil, apperr.New(apperr.Conflict, "%s already exists: plan new writes a new sprint only (pick another --sprint, or edit the files there)", sprint)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "create %s", path.Dir(sprint))
	}
	// One Mkdir decides which of two racing plan new calls writes.
	if err := os.Mkdir(abs, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, apperr.New(apperr.Conflict, "%s already exists: plan new writes a new sprint only", sprint)
		}
		return nil, apperr.Wrap(apperr.Write, err, "create %s", sprint)
	}
	fill := strings.NewReplacer("{{N}}", strconv.Itoa(n))
	story := "s" + strconv.Itoa(n) + "-01-add"
	var written []string
	err := fs.WalkDir(templates, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "templates/")
		if strings.HasPrefix(rel, "story/") {
			rel = story + "/" + strings.TrimPrefix(rel, "story/")
		}
		out := path.Join(sprint, rel)
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(path.Dir(out))), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(out)), []byte(fill.Replace(string(b))), 0o644); err != nil {
			return err
		}
		written = append(written, out)
		return nil
	})
	if err != nil {
		return written, apperr.Wrap(apperr.Write, err, "write the templates of %s", sprint)
	}
	return written, nil
}
