// Package version holds this source tree's version, apart from package
// release (which builds the archives), so that the lean git-ideate binary
// can print it without linking the archive writers.
package version

// Version is this source tree's version: the plugin's, the module's
// release tag without its "v", and what a release binary prints.
const Version = "0.1.0"
