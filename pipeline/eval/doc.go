// Package eval scores what a pipeline version produced for a document
// against what a person says it should have produced (a truth file).
//
// A truth file names one document and, per field of the outputs, the
// expected value and how to compare it:
//
//	{
//	  "document": "../docs/letter.txt",
//	  "sha256": "9f2c...",
//	  "fields": {
//	    "language":       {"expect": "en", "compare": "exact"},
//	    "summary":        {"expect": "We confirm delivery of 12 office chairs.", "weight": 2},
//	    "keywords":       {"expect": ["chairs", "delivery"], "metric": "recall"},
//	    "entities.email": {"expect": ["anna.braendli@sitzwerk.example"]},
//	    "facts.total":    {"expect": 9840, "tolerance": 0.5}
//	  },
//	  "pages": {"1": ["Dear Mr. Oyelaran"], "*": ["Kind regards"]},
//	  "pages_weight": 1
//	}
//
// Field paths are those docpipe uses elsewhere for outputs: "summary" (the
// document summary's text), "language", "keywords", "entities" (every
// entity value) and "entities.TYPE", and "STAGE.FIELD" (as review edits
// name them) for the JSON a user's stage answered, with more dots for
// nested objects and a number for a list element. A segment stage's path
// is a list: the field's value for each segment, in order.
//
// Comparators (Compare): "exact" (equal JSON values), "fuzzy" (1 minus
// the Levenshtein distance over the longer length, after lower-casing and
// reducing every run of characters other than letters and digits to one
// space), "numeric" (1 when within "tolerance", else 0) and "list"
// (precision, recall and F1 after matching expected and produced items
// one to one: greedily, best-scoring pair first, a pair counting when its
// item comparator ("items") scores at least "match"). Without "compare",
// a string is fuzzy, a number numeric, a list a list, anything else exact.
//
// A document's score is the weighted mean of its fields' scores and, with
// weight pages_weight, the share of page snippets found (each looked for,
// normalised like fuzzy text, in the text of its segment, or anywhere for
// "*"). A field the pipeline did not produce scores 0.
package eval
