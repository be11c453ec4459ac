"""Stage: from folders to indexed passages.

    scan.py      the one walk over a library's folders (the indexer's files, the window's watch list)
    chunking.py  token windows of a page (the embedder's own tokens), never across a page, exact spans,
                 a table's header repeated in the windows inside it (whole tables optional)
    context.py   what a chunk inherits for retrieval only (document label, section, table header) and
                 the boilerplate left out (running headers/footers, contents and index pages)
    indexer.py   scan -> diff against the manifest -> parse -> chunk -> embed -> commit, one file at a time
"""
