package main

import (
	"github.com/ideate/git-ideate/internal/corecmd"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// leafCommands lists the word paths of every command with no
// subcommands, and its type.
func leafCommands(t reflect.Type, words []string, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); !isCmd {
			continue
		}
		name := corecmd.CmdName(f)
		if name == "" {
			panic("command field " + f.Name + " has no name narrowing can match: give it a name tag")
		}
		w := append(append([]string(nil), words...), name)
		if f.Type.Kind() == reflect.Struct && corecmd.HasCommands(f.Type) {
			leafCommands(f.Type, w, out)
			continue
		}
		out[strings.Join(w, " ")] = f.Type
	}
}

// kongParse parses args as run does with kong and returns the filled-in
// command, its path and the root -C value; ok is false when kong refuses
// the line.
func kongParse(t *testing.T, args []string) (cmd reflect.Value, path, chdir string, ok bool) {
	t.Helper()
	cli := grammar(args)
	parser, err := kong.New(cli, append(kongOptions(), kong.Exit(func(int) { panic("kong exited") }))...)
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := parser.Parse(joinDashValues(parser.Model, args))
	if err != nil {
		return reflect.Value{}, "", "", false
	}
	v := reflect.ValueOf(cli).Elem()
	for _, w := range corecmd.CommandWords(args) {
		f, found := corecmd.CommandField(v.Type(), w)
		if !found {
			t.Fatalf("%q: no command %q in kong's grammar", args, w)
		}
		v = v.FieldByIndex(f.Index)
	}
	return v, commandPath(kctx), chdirOf(cli), true
}

// Every line fastParse takes, kong takes too, selecting the same command
// and filling in the same values, for lines generated over every command:
// each flag alone and all together, values that look like flags, lists,
// numbers in other bases, empty values, both spellings, and -C before the
// command. The lines it must leave to kong are left.
func TestFastParse_SameAsKong(t *testing.T) {
	leaves := map[string]reflect.Type{}
	leafCommands(reflect.TypeOf(CLI{}), nil, leaves)
	strs := []string{"v", "-x", "--kind", "a b", "", "=", "a,b", "-", "ümlaut", "--", "-h"}
	ints := []string{"5", "-3", "0x10", "010", "1_000", "x", "", "99999999999999999999"}
	lists := []string{"a", "a,b", `a\,b`, "a,,b", ",", ",,", "a,", ",a", `\`, `a\`, `x\y`, `\\,`, "", "-x", "ü,ß"}
	leanLeaves := map[string]reflect.Type{}
	leafCommands(reflect.TypeOf(corecmd.Lean{}), nil, leanLeaves)
	taken, leanTaken, lines := map[string]bool{}, 0, 0
	check := func(args []string) {
		t.Helper()
		lines++
		fast, path, chdir, ok := fastParse(args)
		// The lean binary takes a line exactly when this one takes it
		// without kong at a path of corecmd.Lean, and fills in the same.
		lean, lpath, lchdir, lok := corecmd.FastParse(reflect.TypeOf(corecmd.Lean{}), args)
		if _, inLean := leanLeaves[path]; lok != (ok && inLean) {
			t.Fatalf("%q: the lean binary takes it %v (%q), the full one %v (%q)", args, lok, lpath, ok, path)
		}
		if lok {
			leanTaken++
			if lpath != path || lchdir != chdir || !reflect.DeepEqual(reflect.ValueOf(lean).Elem().Interface(), reflect.ValueOf(fast).Elem().Interface()) {
				t.Fatalf("%q: lean %q -C %q %+v; full %q -C %q %+v", args, lpath, lchdir, lean, path, chdir, fast)
			}
		}
		if !ok {
			return
		}
		taken[path] = true
		kv, kpath, kchdir, kok := kongParse(t, args)
		if !kok {
			t.Fatalf("%q: taken without kong, which refuses it", args)
		}
		if path != kpath || chdir != kchdir {
			t.Fatalf("%q: path %q -C %q; kong %q -C %q", args, path, chdir, kpath, kchdir)
		}
		if got := reflect.ValueOf(fast).Elem().Interface(); !reflect.DeepEqual(got, kv.Interface()) {
			t.Fatalf("%q:\n fast %+v\n kong %+v", args, got, kv.Interface())
		}
	}
	for p, typ := range leaves {
		words := strings.Fields(p)
		flags, plain := corecmd.PlainFlags(typ)
		if !plain {
			if _, _, _, ok := fastParse(words); ok {
				if _, hook := plainHook(words); !hook { // hooks.json's lines: TestPlainHook_SameAsKong
					t.Errorf("%s: not plain, taken all the same", p)
				}
			}
			continue
		}
		sample := func(fl corecmd.PlainFlag) []string {
			switch fl.Kind {
			case reflect.Bool:
				return []string{""}
			case reflect.String:
				return strs
			case reflect.Slice:
				return lists
			}
			return ints
		}
		base := func(skip string) []string {
			line := append([]string(nil), words...)
			for name, fl := range flags {
				if fl.Required && name != skip {
					v := "v"
					if fl.Kind != reflect.String {
						v = "5"
					}
					line = append(line, "--"+name, v)
				}
			}
			return line
		}
		check(base(""))
		for _, pre := range [][]string{{"-C", "/x"}, {"--chdir=/y"}, {"--chdir", "-w"}, {"-C", "-weird"}} {
			check(append(append([]string(nil), pre...), base("")...))
		}
		all := base("")
		for name, fl := range flags {
			for _, v := range sample(fl) {
				if fl.Kind == reflect.Bool {
					check(append(base(name), "--"+name))
					check(append(base(name), "--"+name+"=true"))
					continue
				}
				check(append(base(name), "--"+name, v))
				check(append(base(name), "--"+name+"="+v))
			}
			if !fl.Required {
				if fl.Kind == reflect.Bool {
					all = append(all, "--"+name)
				} else {
					all = append(all, "--"+name, "7")
				}
			}
			// Left to kong: the flag twice, a required one missing.
			if _, _, _, ok := fastParse(append(base(""), "--"+name, "1", "--"+name, "1")); ok && fl.Kind != reflect.Bool {
				t.Errorf("%s: --%s twice taken", p, name)
			}
			if fl.Required {
				if _, _, _, ok := fastParse(base(name)); ok {
					t.Errorf("%s: missing --%s taken", p, name)
				}
			}
		}
		check(all)
		for _, extra := range []string{"--no-such-flag", "-h", "--help", "--", "positional", "-C"} {
			if _, _, _, ok := fastParse(append(base(""), extra)); ok {
				t.Errorf("%s: %q taken", p, extra)
			}
		}
	}
	for _, want := range []string{"record append", "work claim", "work complete", "work list", "record read", "work create"} {
		if !taken[want] {
			t.Errorf("%s never taken without kong", want)
		}
	}
	if leanTaken == 0 {
		t.Error("the lean binary took no line")
	}
	t.Logf("%d lines over %d commands; %d commands taken without kong; %d lines taken by the lean binary", lines, len(leaves), len(taken), leanTaken)
}

// Every command of the lean binary's tree is the full tree's command at
// the same path, of the same type: a line means the same in both.
func TestLean_SameLeavesAsFull(t *testing.T) {
	full, lean := map[string]reflect.Type{}, map[string]reflect.Type{}
	leafCommands(reflect.TypeOf(CLI{}), nil, full)
	leafCommands(reflect.TypeOf(corecmd.Lean{}), nil, lean)
	if len(lean) < 10 {
		t.Fatalf("the lean tree has %d commands", len(lean))
	}
	for p, typ := range lean {
		if full[p] != typ {
			t.Errorf("lean %q is %v; the full tree has %v there", p, typ, full[p])
		}
	}
	for _, want := range []string{"record append", "work claim", "work complete", "work create", "record read"} {
		if lean[want] == nil {
			t.Errorf("the lean binary does not run %q", want)
		}
	}
}
