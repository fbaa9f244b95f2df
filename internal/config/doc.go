// Package config reads git ideate's settings: `.ideate.json` and git
// config ideate.* are parsed, defaulted and validated here and nowhere
// else. The composition root (cmd/git-ideate) loads them and passes plain
// values down: the store's settings as gitstore.Options (StoreOptions),
// the remote as a name.
//
// # Where a value comes from
//
// Each setting is taken from the first of these that sets it:
//
//  1. git config, per clone: `git config ideate.steering true`,
//     `ideate.claimPriming`, `ideate.remote`, and the store's own
//     `ideate.fsync`, `ideate.lockTimeoutMs`, `ideate.staleLockMs`,
//     `ideate.maintenance`, which only git config holds. This is what one
//     clone sets for itself (it lives in .git/config or the user's global
//     git config, and is never shared by a push).
//  2. `.ideate.json` at the top of the working tree: what a team shares.
//     It is committed with the code.
//  3. the defaults (Default).
//
// Config.Source names, for every key, where its value came from: the path
// of the file, "git config", or "default".
//
// Load reads all three; LoadGit reads git config over the defaults and
// never the file, for what opening the store and choosing a remote need,
// so that a broken .ideate.json stops only the commands that read it.
//
// # The file
//
//	{
//	  "schema_version": 10,
//	  "record": {"path": ".ideate/record/"},
//	  "backend": "local",
//	  "work_state": {"path": ".ideate-work/", "claim_priming": false},
//	  "steering": {"enabled": false}
//	}
//
// Every key is optional. A missing file means the defaults. A file with
// neither "record" nor "backend" is a legacy (schema 9) file and is read
// as is. Keys this version does not know are kept (Config.Unknown) and
// otherwise ignored. Load never writes or rewrites the file; WriteDefault
// creates it only when it does not exist.
//
// # Errors
//
// Every failure is an *apperr.Error naming the file and, where there is
// one, the field:
//
//   - CONFIG_VERSION: schema_version is above SchemaVersion (the file was
//     written by a newer git ideate);
//   - CONFIG_PARSE: the file is not JSON (with the line, column and byte
//     offset of the problem);
//   - CONFIG_INVALID: a value has the wrong type or is not allowed (the
//     file is not an object, record.path is empty, backend is not "local",
//     work_state is not an object, a git config boolean is not one, a
//     lock time is not a positive number of milliseconds…);
//   - CONFIG_READ: the file exists but cannot be read.
//
// Unlike the reference implementation, which reads steering.enabled and
// work_state.claim_priming raw (anything but the literal true is false),
// a value of the wrong type is an error here: a typo in a shared file
// should not silently turn a feature off.
package config
