package main

import (
	"reflect"
	"strings"
)

// grammar returns the command tree kong is built from for args. Building
// kong's model walks every command's struct tags with reflection and
// regexps (about 1.3 ms for the whole tree, measured with go test -bench),
// a quarter of a CLI call's budget. So a call that names its command gets a
// tree narrowed to the path it names: `record append` builds the root
// flags, the record group and the append command only. Help and error text
// for the named path are unchanged; anything else (no command, an unknown
// one, a group with --help) gets the whole tree.
func grammar(args []string) any {
	words := commandWords(args)
	t := narrow(reflect.TypeOf(CLI{}), words, 2)
	return reflect.New(t).Interface()
}

// commandWords returns the leading non-flag arguments, skipping the values
// of the root's flags that take one (-C DIR, --chdir DIR).
func commandWords(args []string) []string {
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

// versionOnly reports whether args are the version flag and root flags
// that take a value (-C DIR), nothing else: run answers those without
// kong, whose model even of the root alone was about half of that call's
// CPU (perf; issue 19's start-up figure).
func versionOnly(args []string) bool {
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

// narrow keeps, of t's command fields, only the one named words[0]
// (recursively, depth levels deep). Non-command fields are kept.
func narrow(t reflect.Type, words []string, depth int) reflect.Type {
	if depth == 0 || len(words) == 0 {
		return t
	}
	var fields []reflect.StructField
	found := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd {
			fields = append(fields, f)
			continue
		}
		if cmdName(f) != words[0] {
			continue
		}
		found = true
		if f.Type.Kind() == reflect.Struct && hasCommands(f.Type) {
			f.Type = narrow(f.Type, words[1:], depth-1)
		}
		fields = append(fields, f)
	}
	if !found {
		return t
	}
	return reflect.StructOf(fields)
}

// cmdName is kong's name for a command field: its name tag, or the field
// name in kebab case (kebabName); "" when kong would split the field name
// its own way, so that nothing matches it and kong gets the whole tree.
func cmdName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	n, _ := kebabName(f.Name)
	return n
}

func hasCommands(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if _, ok := t.Field(i).Tag.Lookup("cmd"); ok {
			return true
		}
	}
	return false
}

// chdirOf reads the root -C flag from a (possibly narrowed) grammar.
func chdirOf(cli any) string {
	v := reflect.ValueOf(cli).Elem()
	if f := v.FieldByName("Chdir"); f.IsValid() {
		return f.String()
	}
	return ""
}
