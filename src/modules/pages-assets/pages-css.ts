// The stylesheet of the server-rendered pages (incident status page, confirm and decline pages).
// Served as a file so the pages' Content-Security-Policy needs no 'unsafe-inline'.
export const PAGES_CSS_PATH = '/pages.css';

export const PAGES_CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2433}
body.status main{max-width:40rem;margin:2rem auto;padding:0 1rem}
body.status h1{font-size:1.5rem;margin:.3rem 0 1.2rem}
body.status .status-org{margin:0 0 .6rem;font-weight:600;color:#3d4556}
body.status h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:#5b6475;margin:1.5rem 0 .4rem}
.status-badge{display:inline-block;padding:.2rem .7rem;border-radius:1rem;font-weight:600;background:#e3ecff;color:#1849a9}
.status-badge.resolved,.status-badge.closed{background:#dcf5e3;color:#146c2e}
body.status ul{list-style:none;padding:0}
body.status li{background:#fff;border-radius:.5rem;padding:.8rem 1rem;margin:.6rem 0;box-shadow:0 1px 2px #0001}
body.status li p{margin:0 0 .3rem}
body.status small,body.status .empty{color:#5b6475}
body.status footer{color:#5b6476;font-size:.85rem;margin-top:2rem}
body.decision{font-size:15px;padding:1rem .75rem}
body.decision main{max-width:32rem;margin:1.5rem auto 0;padding:1.5rem 1.25rem;background:#fff;border:1px solid #e2e6ec;border-radius:14px;box-shadow:0 1px 2px #0f172a0f,0 2px 8px #0f172a0d}
body.decision .eyebrow{margin:0 0 .25rem;color:#5b6476;font-size:.8rem;font-weight:600;text-transform:uppercase;letter-spacing:.05em}
body.decision h1{font-size:1.4rem;line-height:1.25;margin:0 0 1rem}
body.decision dl{display:grid;grid-template-columns:auto 1fr;gap:.5rem 1rem;margin:0 0 1.25rem;padding:1rem 1.1rem;background:#f6f7f9;border-radius:10px}
body.decision dt{color:#5b6476;font-size:.85rem;font-weight:600;padding-top:.1rem}
body.decision dd{margin:0;font-weight:600;min-width:0;overflow-wrap:anywhere}
body.decision dd small{color:#5b6476;font-weight:400}
body.decision .pill{display:inline-block;padding:.05rem .55rem;border-radius:999px;font-size:.8rem;background:#e2e6ec}
body.decision .pill.pending{background:#fff4e0;color:#b45309}
body.decision .pill.confirmed{background:#e7f6ec;color:#166534}
body.decision .pill.declined,body.decision .pill.cancelled{background:#fdecec;color:#c62828}
body.decision button{font:inherit;font-weight:600;width:100%;min-height:44px;padding:.6rem 1.2rem;border:0;border-radius:8px;background:#1d4ed8;color:#fff;cursor:pointer}
body.decision button:focus-visible{outline:3px solid #1d4ed84d;outline-offset:2px}
body.decision button.decline{background:#c62828}
body.decision .hint{color:#5b6476;font-size:.9rem;margin:.75rem 0 0}
body.decision .mark{width:52px;height:52px;border-radius:50%;display:grid;place-items:center;font-size:1.5rem;font-weight:700;margin:0 0 1rem}
body.decision .mark.ok{background:#e7f6ec;color:#166534}
body.decision .mark.no{background:#fdecec;color:#c62828}
body.decision footer{text-align:center;color:#5b6476;font-size:.8rem;margin:1.25rem 0}
@media (min-width:600px){body.decision main{margin-top:3rem;padding:2rem}body.decision button{width:auto}}
`;
