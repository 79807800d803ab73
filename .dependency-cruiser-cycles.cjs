// No import circle by value anywhere in src/ (docs/architecture.md, "Dependency rules"), run by
// `npm run lint`. The graph is read as it is at run time: type-only imports, which TypeScript
// erases, are left out (tsPreCompilationDeps: false). Every module is reached through its
// index.ts (.dependency-cruiser.cjs), so a circle between two modules is a circle between files.
const { options } = require('./.dependency-cruiser.cjs');

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circle by value',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: { ...options, tsPreCompilationDeps: false },
};
