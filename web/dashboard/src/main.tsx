import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

const root = document.getElementById('app')!;
// The static "Loading…" line is for the seconds before this script runs; Preact renders into an empty root.
root.textContent = '';
render(<App />, root);
