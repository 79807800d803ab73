import { render } from 'preact';
import '../styles/base.css';

function Page() {
  return <main class="center"><div class="card"><h1>Muster</h1><p class="muted">book page</p></div></main>;
}

render(<Page />, document.getElementById('root')!);
