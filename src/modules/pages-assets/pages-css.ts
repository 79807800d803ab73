// The stylesheet of the server-rendered pages (incident status page, confirm and decline pages).
// Served as a file so the pages' Content-Security-Policy needs no 'unsafe-inline'.
export const PAGES_CSS_PATH = '/pages.css';

export const PAGES_CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2433}
body.status main{max-width:40rem;margin:2rem auto;padding:0 1rem}
body.status h1{font-size:1.5rem;margin:.3rem 0 1.2rem}
body.status h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:#5b6475;margin:1.5rem 0 .4rem}
.status-badge{display:inline-block;padding:.2rem .7rem;border-radius:1rem;font-weight:600;background:#e3ecff;color:#1849a9}
.status-badge.resolved,.status-badge.closed{background:#dcf5e3;color:#146c2e}
body.status ul{list-style:none;padding:0}
body.status li{background:#fff;border-radius:.5rem;padding:.8rem 1rem;margin:.6rem 0;box-shadow:0 1px 2px #0001}
body.status li p{margin:0 0 .3rem}
body.status small,body.status .empty{color:#5b6475}
body.status footer{color:#8a91a0;font-size:.85rem;margin-top:2rem}
body.decision main{max-width:32rem;margin:3rem auto;padding:1.5rem;background:#fff;border-radius:.6rem;box-shadow:0 1px 3px #0002}
body.decision button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:.4rem;background:#1849a9;color:#fff;cursor:pointer}
body.decision button.decline{background:#b42318}
`;
