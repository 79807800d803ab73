import type { PagingQuery } from './schemas.js';

/**
 * Offset paging without counting the whole table: fetch one row more than the page holds, and
 * that row's presence answers `has_more`.
 */
export const fetchWindow = (q: PagingQuery) => ({ limit: q.limit + 1, offset: (q.page - 1) * q.limit });

export function pageOf<T, U>(rows: T[], q: PagingQuery, map: (row: T) => U) {
  return { page: q.page, limit: q.limit, has_more: rows.length > q.limit, items: rows.slice(0, q.limit).map(map) };
}
