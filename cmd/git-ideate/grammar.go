package main

import (
	"github.com/ideate/git-ideate/internal/corecmd"
	"reflect"
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
	words := corecmd.CommandWords(args)
	t := narrow(reflect.TypeOf(CLI{}), words, 2)
	return reflect.New(t).Interface()
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
		if corecmd.CmdName(f) != words[0] {
			continue
		}
		found = true
		if f.Type.Kind() == reflect.Struct && corecmd.HasCommands(f.Type) {
			f.Type = narrow(f.Type, words[1:], depth-1)
		}
		fields = append(fields, f)
	}
	if !found {
		return t
	}
	return reflect.StructOf(fields)
}

// chdirOf reads the root -C flag from a (possibly narrowed) grammar.
func chdirOf(cli any) string {
	v := reflect.ValueOf(cli).Elem()
	if f := v.FieldByName("Chdir"); f.IsValid() {
		return f.String()
	}
	return ""
}
