"""Stage: from folders to indexed passages.

    scan.py      the one walk over a library's folders (the indexer's files, the window's watch list)
    chunking.py  token windows of a page (the embedder's own tokens), never across a page, exact spans
    indexer.py   scan -> diff against the manifest -> parse -> chunk -> embed -> commit, one file at a time
"""
