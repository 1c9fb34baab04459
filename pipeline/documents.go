package pipeline

import (
	"context"

	"github.com/docpipe/docpipe/pipeline/table"
)

// GetDocument reads a document; ErrNotFound if missing.
func (r *Repository) GetDocument(ctx context.Context, projectID, documentID string) (Document, error) {
	var d Document
	return d, r.get(ctx, DocumentKey(projectID, documentID), &d)
}

// ListProjectDocuments pages through a project's documents in id order.
func (r *Repository) ListProjectDocuments(ctx context.Context, projectID string, limit int, pageToken string) ([]Document, string, error) {
	return queryPage[Document](ctx, r.t, table.Query{PK: ProjectKey(projectID).PK, SKPrefix: PrefixDocument, Limit: limit, PageToken: pageToken})
}

// DocumentsByContent returns every document whose bytes hash to sha256hex.
func (r *Repository) DocumentsByContent(ctx context.Context, sha256hex string) ([]Document, error) {
	items, err := queryAll(ctx, r.t, table.Query{Index: table.IndexGSI2, PK: ContentIndexPK(sha256hex), SKPrefix: PrefixDocument})
	if err != nil {
		return nil, err
	}
	return decodeAll[Document](items)
}
