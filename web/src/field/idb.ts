// A tiny promise wrapper over IndexedDB: one database, one object store keyed by `id`.
export interface Store<T> {
  put(value: T): Promise<void>;
  get(id: string): Promise<T | undefined>;
  all(): Promise<T[]>;
  delete(id: string): Promise<void>;
}

const done = <R>(req: IDBRequest<R>) =>
  new Promise<R>((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });

export function openStore<T>(dbName: string, storeName: string): Store<T> {
  let dbp: Promise<IDBDatabase> | undefined;
  const db = () =>
    (dbp ??= new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(dbName, 1);
      req.onupgradeneeded = () => {
        if (!req.result.objectStoreNames.contains(storeName)) req.result.createObjectStore(storeName, { keyPath: 'id' });
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => {
        dbp = undefined;
        reject(req.error ?? new Error('IndexedDB could not be opened'));
      };
    }));
  const run = async <R>(mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest<R>): Promise<R> => {
    const tx = (await db()).transaction(storeName, mode);
    // A write is only durable once its transaction completes.
    const complete = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    });
    const result = await done(fn(tx.objectStore(storeName)));
    await complete;
    return result;
  };
  return {
    put: async (value) => void (await run('readwrite', (s) => s.put(value))),
    get: (id) => run('readonly', (s) => s.get(id) as IDBRequest<T | undefined>),
    all: () => run('readonly', (s) => s.getAll() as IDBRequest<T[]>),
    delete: async (id) => void (await run('readwrite', (s) => s.delete(id))),
  };
}
