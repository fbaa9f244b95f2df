package plan

import (
	"strconv"
	"strings"
)

// FrontMatter is a file's YAML front matter as flat key/value pairs in
// file order. Only the flat subset the playbook writes is read (`key:
// value`, values plain, single- or double-quoted); a nested or list line
// is kept as Raw and otherwise ignored. Values are strings: `sprint: 1`
// and `sprint: "1"` read the same, and an unquoted timestamp stays the
// text it was (no time.Time surprise, see playbook-artifacts.md §2.3).
type FrontMatter struct {
	Fields []Field `json:"fields,omitempty"`
}

// Field is one front matter entry.
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Line  int    `json:"line"`
	Raw   bool   `json:"raw,omitempty"` // a line the flat reader did not decode
}

// Get returns the value of key and whether it is present.
func (f FrontMatter) Get(key string) (string, bool) {
	for _, x := range f.Fields {
		if !x.Raw && x.Key == key {
			return x.Value, true
		}
	}
	return "", false
}

// line returns the line of key, or 0.
func (f FrontMatter) line(key string) int {
	for _, x := range f.Fields {
		if !x.Raw && x.Key == key {
			return x.Line
		}
	}
	return 0
}

// readFrontMatter takes the block between a first line "---" and the next
// "---" (or "...") line.
func (d *mdoc) readFrontMatter() {
	if len(d.lines) == 0 || strings.TrimRight(d.lines[0], " \t") != "---" {
		return
	}
	closeIdx := -1
	for i := 1; i < len(d.lines); i++ {
		t := strings.TrimRight(d.lines[i], " \t")
		if t == "---" || t == "..." {
			closeIdx = i
			break
		}
	}
	if closeIdx < 0 {
		d.problems = append(d.problems, Finding{File: d.path, Line: 1, Rule: RuleFrontUnterminated, Message: "front matter opened with --- is never closed; the file is read as having none", Severity: Error})
		return
	}
	d.hasFront = true
	d.body = closeIdx + 1
	for i := 1; i < closeIdx; i++ {
		l := d.lines[i]
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(t, "- ") {
			d.front.Fields = append(d.front.Fields, Field{Value: l, Line: i + 1, Raw: true})
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			d.problems = append(d.problems, Finding{File: d.path, Line: i + 1, Rule: RuleFrontBadLine, Message: "front matter line is not `key: value`", Severity: Error})
			continue
		}
		val, err := yamlScalar(strings.TrimSpace(v))
		if err != "" {
			d.problems = append(d.problems, Finding{File: d.path, Line: i + 1, Rule: RuleFrontBadLine, Message: "front matter value of " + k + " " + err, Severity: Error})
			continue
		}
		d.front.Fields = append(d.front.Fields, Field{Key: k, Value: val, Line: i + 1})
	}
}

// yamlScalar decodes a flat YAML scalar: "double" (with \ escapes),
// 'single' (with ” for '), or plain (a trailing " #comment" dropped).
func yamlScalar(v string) (string, string) {
	switch {
	case v == "":
		return "", ""
	case v[0] == '"':
		end := -1
		for i := 1; i < len(v); i++ {
			if v[i] == '\\' {
				i++
				continue
			}
			if v[i] == '"' {
				end = i
				break
			}
		}
		if end < 0 {
			return "", "has an unterminated double quote"
		}
		if rest := strings.TrimSpace(v[end+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", "has text after its closing quote"
		}
		s, err := strconv.Unquote(v[:end+1])
		if err != nil {
			// YAML escapes Go does not know (\e, \N …): keep the text.
			return v[1:end], ""
		}
		return s, ""
	case v[0] == '\'':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] == '\'' {
				if i+1 < len(v) && v[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", "has text after its closing quote"
				}
				return b.String(), ""
			}
			b.WriteByte(v[i])
		}
		return "", "has an unterminated single quote"
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		return v, ""
	}
}
