export const APP_CONFIG = Symbol('APP_CONFIG');
/** The ioredis client, or null when REDIS_URL is not set. */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
/** The Mongoose connection, or null when MONGODB_URI is not set. */
export const MONGO_CONNECTION = Symbol('MONGO_CONNECTION');
/** The pg Pool, or null when DATABASE_URL is not set: shared by reservations, users, the read model and machine IDs. */
export const POSTGRES_POOL = Symbol('POSTGRES_POOL');
