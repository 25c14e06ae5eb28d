export { INGRESS_AGENT, startIngress, type IngressComponent } from './ingress.app';
