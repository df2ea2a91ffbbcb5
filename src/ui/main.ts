document.querySelector('#app')!.textContent = 'WebGPU inference benchmark';
