// Package hostile writes files built to exhaust a document parser:
// decompression bombs in every container docpipe opens, deep nesting,
// huge single units. The files are generated, never kept: a test or a
// benchmark writes the ones it needs, at the scale it can afford.
package hostile
