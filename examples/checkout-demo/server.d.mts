import type { Server } from 'node:http';
export function createDemoServer(options: { apiUrl: string; secretKey: string; amount?: number; description?: string }): Server;
