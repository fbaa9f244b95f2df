package corecmd

import (
	"reflect"
	"strings"
)

// KebabName is kong's name for a flag whose field name is words of one
// capital letter and then lower-case letters (IncludeContent:
// include-content); ok is false for any other field name (acronyms,
// digits), which kong splits its own way.
func KebabName(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if i+1 >= len(s) || s[i+1] < 'a' || s[i+1] > 'z' {
				return "", false
			}
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z' && i > 0:
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// CommandWords returns the leading non-flag arguments, skipping the values
// of the root's flags that take one (-C DIR, --chdir DIR).
func CommandWords(args []string) []string {
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-"):
			if len(words) == 0 {
				continue
			}
			return words
		default:
			words = append(words, a)
		}
	}
	return words
}

// VersionOnly reports whether args are the version flag and root flags
// that take a value (-C DIR), nothing else: run answers those without
// kong, whose model even of the root alone was about half of that call's
// CPU (perf).
func VersionOnly(args []string) bool {
	seen := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--version":
			seen = true
		case "-C", "--chdir":
			i++
		default:
			return false
		}
	}
	return seen
}

// CmdName is kong's name for a command field: its name tag, or the field
// name in kebab case (KebabName); "" when kong would split the field name
// its own way, so that nothing matches it and kong gets the whole tree.
func CmdName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	n, _ := KebabName(f.Name)
	return n
}

// HasCommands reports whether struct type t has command fields.
func HasCommands(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if _, ok := t.Field(i).Tag.Lookup("cmd"); ok {
			return true
		}
	}
	return false
}
