// Module boundaries, run by `npm run lint` (docs/architecture.md, "Dependency rules").
//
// 1. A module (a folder under src/modules) is used through its index.ts only.
// 2. Dependencies point down the layers below: a module may import, by value, modules of lower
//    layers only (type-only imports vanish at run time and may point either way; they still go
//    through index.ts). The foundation (lib, db, events, config, and the HTTP helpers plugins/route,
//    errors and validation) imports no module; the shell (app.ts, server.ts, context.ts, jobs, ops,
//    plugins/auth and plugins/csrf) may import any module.
// 3. No import circle by value anywhere in src/: a circle counts when every import in it is by value
//    (`viaOnly`: type-only imports vanish at run time). Every module is reached through its index.ts,
//    so a circle between two modules is a circle between files.
/** Bottom first. Modules of one line may not import each other by value. */
const LAYERS = [
  ['pages-assets', 'uploads', 'system'],
  ['metrics'],
  ['users'],
  ['deliveries'],
  ['orgs'],
  ['api-keys'],
  ['auth', 'web'],
  ['incidents'],
  ['signals'],
  ['devices', 'dispatch'],
  ['tracks'],
  ['trackers', 'streams', 'calendars', 'sites'],
  ['scheduling'],
  ['oncall', 'integrations', 'retention'],
  ['paging', 'subscriptions'],
  ['inbound-email', 'privacy', 'reports'],
];

const all = LAYERS.flat();
const alt = (names) => `(${names.join('|')})`;
const layerRules = LAYERS.flatMap((layer, i) => {
  const notBelow = LAYERS.slice(i).flat();
  return layer.map((name) => ({
    name: `layer-${name}`,
    comment: `${name} may import only modules of lower layers (docs/architecture.md, "Dependency rules")`,
    severity: 'error',
    from: { path: `^src/modules/${name}/`, pathNot: '\\.test\\.ts$' },
    to: {
      path: `^src/modules/${alt(notBelow.filter((n) => n !== name))}/`,
      dependencyTypesNot: ['type-only'],
    },
  }));
});

module.exports = {
  forbidden: [
    {
      name: 'no-deep-import',
      comment: "Another module's files are reached through its index.ts only",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'no-deep-import-from-outside',
      comment: 'Code outside src/modules (app, server, jobs, plugins, ops) uses a module through its index.ts only',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/modules/', '\\.test\\.ts$'] },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'foundation-imports-no-module',
      comment: 'lib, db, events and config are below every module',
      severity: 'error',
      from: { path: '^src/(lib|db|events)/|^src/config\\.ts$|^src/plugins/(route|errors|validation)\\.ts$', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/(modules|jobs|ops)/|^src/plugins/(?!(route|errors|validation)\\.ts$)|^src/(app|server|context)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'modules-below-the-shell',
      comment: 'A module uses the HTTP helpers of plugins (route, errors, validation), never the shell',
      severity: 'error',
      from: { path: '^src/modules/', pathNot: '\\.test\\.ts$' },
      to: {
        path: '^src/(jobs|ops)/|^src/(app|server|context)\\.ts$|^src/plugins/(?!(route|errors|validation)\\.ts$)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'unlisted-module',
      comment: 'Every module has its place in LAYERS (.dependency-cruiser.cjs)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/modules/', pathNot: `^src/modules/${alt(all)}/` },
    },
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'No import circle by value',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
