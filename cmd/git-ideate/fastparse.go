package main

import (
	"context"
	"reflect"
	"strconv"
	"strings"
)

// Building kong's model and parsing with it were 9 % of a CLI record
// append's samples (perf, 300 calls) even on the narrowed tree (grammar).
// fastParse fills in the command an argument list names without kong when
// the list is plain, and leaves everything else to kong, which then
// parses, validates and reports errors as before:
//
//   - root flags -C DIR, --chdir DIR or --chdir=DIR, and only before the
//     command words;
//   - command words down to a command with no subcommands and no
//     positional arguments;
//   - then only --name=value, --name value (for a flag that takes a
//     value: the next argument, whatever it is, as joinDashValues has kong
//     read it) and --name (a bool), each flag at most once;
//   - flags of type string, bool, int and int64 (and pointers to them),
//     named by a name tag or by a field name of plain words; a flag of any
//     other type (a list, a duration), another tag kong would act on, or
//     a missing required flag sends the line to kong.
//
// It also takes the hook lines of hooks.json (plainHook).
// TestFastParse_SameAsKong parses generated lines of every command both
// ways and compares what each fills in.
func fastParse(args []string) (cmd runner, path, chdir string, ok bool) {
	if hc, ok := plainHook(args); ok {
		return hc, "hook", "", true
	}
	i := 0
	for i < len(args) {
		switch a := args[i]; {
		case a == "-C" || a == "--chdir":
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return nil, "", "", false // kong reads "-C -x" as "=-x"
			}
			chdir = args[i+1]
			i += 2
			continue
		case strings.HasPrefix(a, "--chdir="):
			chdir = a[len("--chdir="):]
			i++
			continue
		}
		break
	}
	t := reflect.TypeOf(CLI{})
	var words []string
	for i < len(args) && !strings.HasPrefix(args[i], "-") {
		f, found := commandField(t, args[i])
		if !found || len(words) > 0 && groupFlags(t) {
			return nil, "", "", false
		}
		words = append(words, args[i])
		t = f.Type
		i++
	}
	if len(words) == 0 || t.Kind() != reflect.Struct || hasCommands(t) {
		return nil, "", "", false
	}
	flags, plain := plainFlags(t)
	if !plain {
		return nil, "", "", false
	}
	v := reflect.New(t)
	seen := map[string]bool{}
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return nil, "", "", false
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		fl, known := flags[name]
		if !known || seen[name] {
			return nil, "", "", false
		}
		seen[name] = true
		if fl.kind == reflect.Bool {
			if hasValue {
				return nil, "", "", false
			}
			value = "true"
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, "", "", false
			}
			i++
			value = args[i]
		}
		if !fl.set(v.Elem(), value) {
			return nil, "", "", false
		}
	}
	for name, fl := range flags {
		if seen[name] {
			continue
		}
		if fl.required {
			return nil, "", "", false
		}
		if fl.def != "" && !fl.set(v.Elem(), fl.def) {
			return nil, "", "", false
		}
	}
	r, isRunner := v.Interface().(runner)
	if !isRunner {
		return nil, "", "", false
	}
	return r, strings.Join(words, " "), chdir, true
}

// runner is a command's Run method as kong would call it with run's
// bindings.
type runner interface {
	Run(ctx context.Context, env *Env) error
}

// commandField is t's command field named word.
func commandField(t reflect.Type, word string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd && cmdName(f) == word {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// plainFlag is one flag fastParse can fill in.
type plainFlag struct {
	index    []int // the field, through embedded structs
	kind     reflect.Kind
	ptr      bool
	required bool
	def      string
}

// set parses value into the flag's field of cmd as kong's mappers do
// (ints through strconv.ParseInt with base 0).
func (f plainFlag) set(cmd reflect.Value, value string) bool {
	fv := cmd.FieldByIndex(f.index)
	target := fv
	if f.ptr {
		target = reflect.New(fv.Type().Elem()).Elem()
	}
	switch f.kind {
	case reflect.String:
		target.SetString(value)
	case reflect.Bool:
		target.SetBool(true)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 0, target.Type().Bits())
		if err != nil {
			return false
		}
		target.SetInt(n)
	default:
		return false
	}
	if f.ptr {
		fv.Set(target.Addr())
	}
	return true
}

// kongActs are the tags that change what kong fills in beyond a flag's
// name, requiredness and default; a command using one goes to kong.
var kongActs = []string{"arg", "cmd", "enum", "sep", "mapsep", "env", "type", "xor", "and", "short", "aliases", "negatable", "kong", "embed", "prefix", "passthrough", "hidden"}

// plainFlags lists the flags of command type t by name; plain is false
// when t has anything fastParse does not fill in as kong does.
func plainFlags(t reflect.Type) (map[string]plainFlag, bool) {
	flags := map[string]plainFlag{}
	var walk func(t reflect.Type, index []int) bool
	walk = func(t reflect.Type, index []int) bool {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous {
				if f.Type.Kind() != reflect.Struct || f.Tag != "" || !walk(f.Type, idx) {
					return false
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			for _, k := range kongActs {
				if _, has := f.Tag.Lookup(k); has {
					return false
				}
			}
			ft, ptr := f.Type, false
			if ft.Kind() == reflect.Pointer {
				ft, ptr = ft.Elem(), true
			}
			if ft.PkgPath() != "" { // a named type: kong may map it its own way
				return false
			}
			switch ft.Kind() {
			case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
			default:
				return false
			}
			name := f.Tag.Get("name")
			if name == "" {
				n, ok := kebabName(f.Name)
				if !ok {
					return false // kong splits the words its own way
				}
				name = n
			}
			def := f.Tag.Get("default")
			if strings.Contains(def, "${") || (def != "" && ft.Kind() == reflect.Bool) {
				return false
			}
			_, required := f.Tag.Lookup("required")
			if _, dup := flags[name]; dup {
				return false
			}
			flags[name] = plainFlag{index: idx, kind: ft.Kind(), ptr: ptr, required: required, def: def}
		}
		return true
	}
	return flags, walk(t, nil)
}

// kebabName is kong's name for a flag whose field name is words of one
// capital letter and then lower-case letters (IncludeContent:
// include-content); ok is false for any other field name (acronyms,
// digits), which kong splits its own way.
func kebabName(s string) (string, bool) {
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

// groupFlags reports whether a command group declares flags of its own
// (kong would take them anywhere after the group's word).
func groupFlags(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd && (f.IsExported() || f.Anonymous) {
			return true
		}
	}
	return false
}
