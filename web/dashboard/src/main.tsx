import { render } from 'preact';
import { App } from './app.js';
// The stylesheets in cascade order (later files may override earlier ones).
import './styles/base.css';
import './styles/layout.css';
import './styles/content.css';
import './styles/data.css';
import './styles/timeline.css';

const root = document.getElementById('app')!;
// The static "Loading…" line is for the seconds before this script runs; Preact renders into an empty root.
root.textContent = '';
render(<App />, root);
